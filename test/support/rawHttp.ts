/**
 * An HTTP/1.1 POST over a plain socket that writes its whole body, a chunk at a time, before it
 * reads the answer: a client that is still sending when the server answers. With `fetch` the
 * same situation is a race (the answer may win); here it is certain, so a server that answers and
 * closes without reading the body shows up as a write error every time.
 */
import net from "node:net";

export interface RawResponse {
  status: number;
  body: string;
}

export function postWholeBody(baseUrl: string, path: string, body: Buffer, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const received: Buffer[] = [];
    socket.on("data", (chunk) => received.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const text = Buffer.concat(received).toString("utf8");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      if (!status) return reject(new Error(`no HTTP status in: ${text.slice(0, 200)}`));
      resolve({ status, body: text.slice(text.indexOf("\r\n\r\n") + 4) });
    });
    socket.once("connect", async () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        `host: ${url.host}`,
        "connection: close",
        `content-length: ${body.length}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      const write = (data: Buffer | string) => new Promise<void>((done, fail) => socket.write(data, (err) => (err ? fail(err) : done())));
      try {
        await write(head.join("\r\n") + "\r\n\r\n");
        for (let offset = 0; offset < body.length; offset += 1 << 16) await write(body.subarray(offset, offset + (1 << 16)));
      } catch (err) {
        reject(new Error(`the server stopped reading the body: ${(err as Error).message}`));
      }
    });
  });
}

/**
 * Writes `request` (raw bytes, possibly not valid HTTP, possibly an unfinished body) and reads
 * whatever the server answers until it closes the connection: how parser-level refusals
 * (400, 408, 431) are observed.
 */
export function rawExchange(baseUrl: string, request: string): Promise<RawResponse & { headers: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(request));
    const received: Buffer[] = [];
    socket.on("data", (chunk) => received.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(received).toString("utf8");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      if (!status) return reject(new Error(`no HTTP status in: ${JSON.stringify(text.slice(0, 200))}`));
      const split = text.indexOf("\r\n\r\n");
      resolve({ status, headers: text.slice(0, split).toLowerCase(), body: text.slice(split + 4) });
    });
  });
}
