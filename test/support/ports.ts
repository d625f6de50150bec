// A free TCP port on loopback, for servers that must be told their port on the command line
// (code-server, postgres) instead of binding port 0 themselves.
import net from "node:net";

export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error(`unexpected server address ${String(address)}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
