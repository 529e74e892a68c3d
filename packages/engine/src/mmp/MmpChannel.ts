import type { Caller } from "../rfq/RfqRecord.js"
import type { Json } from "../rfq/RfqView.js"
import type { MmpNotice } from "./MmpNotices.js"

/**
 * What a session of `caller` hears of `notice` on the `mmp.maker` channel: its own desk's trips and
 * thaws, and nothing of any other desk's (config changes are not told there).
 *
 * - tripped: `{event: "tripped", baseCurrency, frozen: true, frozenUntil?, limit, window: {amount,
 *   delta, trades}}` (`frozenUntil` absent: frozen until a reset; `limit` the one reached);
 * - thawed: `{event: "thawed", baseCurrency, frozen: false, by}` (`by`: `time`, `reset`, `delete`).
 */
export const renderMmpNotice = (notice: MmpNotice, caller: Caller): Json | undefined => {
  if (notice.deskId !== caller.deskId || caller.makerId === undefined) return undefined
  switch (notice.event) {
    case "tripped":
      return {
        event: "tripped",
        baseCurrency: notice.baseCurrency,
        frozen: true,
        ...(notice.frozenUntil === undefined ? {} : { frozenUntil: notice.frozenUntil }),
        limit: notice.limit,
        window: {
          amount: Number(notice.window.amount),
          delta: Number(notice.window.delta),
          trades: notice.window.trades
        }
      }
    case "thawed":
      return { event: "thawed", baseCurrency: notice.baseCurrency, frozen: false, by: notice.by }
    case "changed":
      return undefined
  }
}

/** The base currency a notice is about, for a channel's currency suffix. */
export const noticeCurrency = (notice: MmpNotice): string | undefined =>
  notice.event === "changed" ? undefined : notice.baseCurrency
