import { Buffer } from "node:buffer"

/** Room for any `seq` (a safe integer has at most 16 digits). */
const SEQ_ROOM = 16

/**
 * One event's notification on one channel, serialised once for every session that sees it alike.
 * Only `seq` differs between those sessions, so the frame is kept as bytes, `data` at the end of
 * its buffer, and a session's frame is those bytes with its `seq` written just before them and the
 * 70-odd bytes before `seq` in front of it: no string, allocation or UTF-8 encoding per socket, and
 * only the digits written while the number of digits stays the same. The bytes are exactly
 * `subscriptionNotificationText(channel, seq, dataJson)` in UTF-8.
 */
export class NotificationFrame {
  private readonly head: Uint8Array
  private readonly buffer: Uint8Array
  /** Where the bytes after `seq` start in `buffer`. */
  private readonly tailAt: number
  /** The frame's view for each number of digits of `seq`, made on first use. */
  private readonly views: Array<Uint8Array | undefined> = []
  /** The number of digits the head is in place for (0: none yet). */
  private headFor = 0

  constructor(
    readonly channel: string,
    readonly dataJson: string
  ) {
    this.head = Buffer.from(
      `{"jsonrpc":"2.0","method":"v1/subscription","params":{"channel":${JSON.stringify(channel)},"seq":`,
      "utf8"
    )
    const tail = Buffer.from(`,"data":${dataJson}}}`, "utf8")
    this.tailAt = this.head.length + SEQ_ROOM
    this.buffer = new Uint8Array(this.tailAt + tail.length)
    this.buffer.set(tail, this.tailAt)
  }

  /**
   * The frame of the session at `seq` (a positive safe integer), a view of this frame's buffer valid
   * until its next call: send (or copy) it at once.
   */
  bytes(seq: number): Uint8Array {
    if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`seq ${seq} is not a safe integer`)
    let digits = 1
    for (let rest = seq; rest >= 10; rest = Math.floor(rest / 10)) digits++
    const { buffer, tailAt } = this
    const start = tailAt - digits - this.head.length
    if (this.headFor !== digits) {
      buffer.set(this.head, start)
      this.headFor = digits
    }
    for (let at = tailAt - 1, rest = seq; at >= tailAt - digits; at--, rest = Math.floor(rest / 10))
      buffer[at] = 48 + (rest % 10)
    let view = this.views[digits]
    if (view === undefined) {
      view = buffer.subarray(start)
      this.views[digits] = view
    }
    return view
  }
}
