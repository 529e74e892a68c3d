import type { World } from "../World.js"

/**
 * What the scenarios that configure or restart the host need besides a URL. Only the Vitest files
 * that spawn their own hosts can provide it; the command line against a deployment runs without
 * these scenarios.
 */
export interface HostControl {
  /** The key the host signs access tokens with (`JWT_SECRET`), to forge expired or odd tokens. */
  readonly jwtSecret: string
  /** Stops the host with SIGTERM (asserting a clean exit) and starts it again on the same data. */
  readonly restart: () => Promise<void>
  /** The current base URL (a restarted host listens on a new port). */
  readonly url: () => string
}

export interface HostedContext {
  readonly world: World
  readonly host: HostControl
}
