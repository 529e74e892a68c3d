/**
 * `@rfq/client`: the typed client of the RFQ service, for Node 20 and the browser. Every
 * operation of the service's endpoint table (`@rfq/engine/api`) by its JSON-RPC name, over REST
 * (`RfqClient.call`) or a WebSocket session (`RfqClient.session`), with tokens, rate limits,
 * heartbeats and reconnection handled. See packages/client/README.md.
 */
export type { EndpointInput, EndpointName, EndpointOutput } from "@rfq/engine/api"
export { type BackoffOptions, backoffDelayMs } from "./Backoff.js"
export { type RateLimitWait, RfqClient, type RfqClientOptions } from "./RfqClient.js"
export { RfqError } from "./RfqError.js"
export { type Notification, RfqSession, type SessionOptions, type SessionStatus } from "./RfqSession.js"
export type { Gap } from "./SeqTracker.js"
export type { Timers } from "./Timers.js"
export type { Tokens } from "./TokenKeeper.js"
export type { WebSocketInstance, WebSocketLike } from "./WebSocketLike.js"
