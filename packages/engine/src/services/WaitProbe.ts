import { Effect } from "effect"

/**
 * Where a request's wall time goes while it waits (for an RFQ's mailbox, a database connection or
 * permit, a statement's answer): spans and marks that exist only while a wait profile is installed
 * (the host's `RFQ_WAIT_PROFILE`). Off, which is always the case outside a profiling run, each
 * costs one comparison: an Effect span costs time even under the default tracer, so none is made.
 *
 * Module state on purpose: the probe is a diagnostic switched on once per process, before any
 * request, and read on hot paths where a service lookup would cost what it is meant to avoid.
 */
export interface WaitProbe {
  /**
   * Called in the fiber that starts a wait made of several phases outside Effect (a statement in
   * the connection pool's callbacks): returns their recorder, attached to the fiber's current span.
   */
  readonly phases: () => WaitPhases
}

export interface WaitPhases {
  /** The phase `name` ran from the previous mark (or from `phases()`) until now. */
  readonly mark: (name: string) => void
}

let installed: WaitProbe | undefined

/** Installs (or, with undefined, removes) the probe; the host does it once, at start. */
export const installWaitProbe = (probe: WaitProbe | undefined): void => {
  installed = probe
}

/** The phases of a wait about to start, or undefined when no wait profile is installed. */
export const waitPhases = (): WaitPhases | undefined => installed?.phases()

/** Whether a wait profile is installed. */
export const waitProfiling = (): boolean => installed !== undefined

/** `effect` in a span named `name` while a wait profile is installed; `effect` itself otherwise. */
export const waitSpan =
  (name: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    installed === undefined ? effect : Effect.withSpan(effect, name, { captureStackTrace: false })
