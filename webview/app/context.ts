/** The Transport reaches every component through Svelte context, set once by the entry point. */
import { getContext, setContext } from "svelte";
import type { Transport } from "../../ui-shared/transport.js";

const TRANSPORT_KEY = Symbol("svc.transport");

export function provideTransport(transport: Transport): void {
  setContext(TRANSPORT_KEY, transport);
}

export function useTransport(): Transport {
  const transport = getContext<Transport | undefined>(TRANSPORT_KEY);
  if (!transport) throw new Error("useTransport() called outside a component tree that provided a Transport");
  return transport;
}
