/**
 * What the two examples share: a client configured from the environment, and a failure as the
 * service worded it.
 */
import { RfqClient, RfqError } from "@rfq/client"
import WebSocket from "ws"

/** A client for CLIENT_ID (else `defaultClientId`) at RFQ_URL; the demo's secrets are `<id>-secret`. */
export const clientFromEnv = (
  defaultClientId: string
): { readonly clientId: string; readonly client: RfqClient } => {
  const clientId = process.env.CLIENT_ID ?? defaultClientId
  const client = new RfqClient({
    baseUrl: process.env.RFQ_URL ?? "http://127.0.0.1:8080",
    clientId,
    clientSecret: process.env.CLIENT_SECRET ?? `${clientId}-secret`,
    WebSocket
  })
  return { clientId, client }
}

/** The status, message and reasons of a service error; anything else as text. */
export const describeError = (error: unknown): string =>
  error instanceof RfqError
    ? `${error.status} ${error.message} ${error.reasons.join("; ")}`.trim()
    : String(error)
