/**
 * The service numbers the notifications of a connection from 1 without gaps (docs/websocket.md).
 * A number other than the next one means notifications were lost; a new connection starts again
 * at 1, and whatever happened between the drop and the re-subscription was not sent at all. Both
 * are reported as a gap so the caller knows to read the state again over REST.
 */
export interface Gap {
  /** The `seq` that should have come next (on the old connection, for a reconnect). */
  readonly expected: number
  /** The `seq` that came (1 on a new connection). */
  readonly received: number
  /** `seq`: a jump within a connection; `reconnect`: a new connection, events of the outage lost. */
  readonly kind: "seq" | "reconnect"
}

export class SeqTracker {
  private last = 0

  /** A notification's seq: a gap to report, or undefined when it is the next one. */
  next(seq: number): Gap | undefined {
    const expected = this.last + 1
    this.last = Math.max(this.last, seq)
    return seq === expected ? undefined : { expected, received: seq, kind: "seq" }
  }

  /** A new connection: numbering starts again at 1; the gap to report for the outage. */
  reconnected(): Gap {
    const gap: Gap = { expected: this.last + 1, received: 1, kind: "reconnect" }
    this.last = 0
    return gap
  }
}
