/**
 * A maker's quoting bot on `@rfq/client`: quotes every RFQ it is invited on, a bid at the mark
 * minus a spread and an ask at the mark plus it (leg prices from the service's leg-price helper,
 * `v1/rfq/leg-prices`), moves its quotes to the new mark every `REQUOTE_SECONDS`, and withdraws
 * them all on Ctrl-C (`v1/quote/cancel-all`; cancel-on-disconnect covers a crash).
 *
 *   npx tsx examples/maker-bot.ts
 *
 * Environment: RFQ_URL (http://127.0.0.1:8080), CLIENT_ID / CLIENT_SECRET (demo-maker-1),
 * SPREAD (0.001, in the structure's price), REQUOTE_SECONDS (10).
 */
import type { EndpointOutput, Notification } from "@rfq/client"
import { clientFromEnv, describeError } from "./shared.js"

type MakerRfq = EndpointOutput<"v1/rfq/get">

const { clientId, client } = clientFromEnv("demo-maker-1")
const spread = Number(process.env.SPREAD ?? "0.001")
const requoteMs = Number(process.env.REQUOTE_SECONDS ?? "10") * 1000
const TICK = 0.0001

const log = (...parts: ReadonlyArray<unknown>) => console.log(new Date().toISOString(), ...parts)
/** To the tick, without binary noise (`0.6728`, not `0.6728000000000001`, in the log and on the wire). */
const onTick = (price: number) => Number((Math.round(price / TICK) * TICK).toFixed(4))

/** RFQs being quoted, by id: the labels of this bot's quotes on it. */
const quoted = new Map<number, ReadonlyArray<string>>()

/** Both sides of one RFQ, on the first settlement option the bot may quote on; updated when quoted before. */
const quote = async (rfq: MakerRfq): Promise<void> => {
  if (rfq.status !== "open" || rfq.role !== "maker") return
  const legs = rfq.legs.map(({ instrumentName, direction, ratio }) => ({ instrumentName, direction, ratio }))
  const hedge =
    rfq.hedge?.instrumentName === undefined
      ? {}
      : { hedge: { instrumentName: rfq.hedge.instrumentName, price: rfq.hedge.price } }
  const labels: Array<string> = []
  for (const [direction, price] of [
    ["buy", onTick(rfq.markPrice - spread)],
    ["sell", onTick(rfq.markPrice + spread)]
  ] as const) {
    const label = `bot-${rfq.rfqId}-${direction}`
    const priced = await client.call("v1/rfq/leg-prices", { rfqId: rfq.rfqId, price, legs })
    const body = {
      label,
      amount: rfq.amount,
      legs: priced.legs.map((leg) => ({ instrumentName: leg.instrumentName, price: leg.price })),
      ...hedge
    }
    for (const settlementOption of rfq.settlementOptions) {
      try {
        if (quoted.get(rfq.rfqId)?.includes(label)) {
          await client.call("v1/quote/update", { ...body, settlementOption })
          log(`updated ${label} at ${price} on RFQ ${rfq.rfqId} (${rfq.description})`)
        } else {
          const { rfqQuoteId } = await client.call("v1/quote/create", {
            ...body,
            rfqId: rfq.rfqId,
            direction,
            settlementOption
          })
          log(`quoted ${label} (#${rfqQuoteId}) at ${price} on RFQ ${rfq.rfqId} (${rfq.description})`)
        }
        labels.push(label)
        break
      } catch (error) {
        log(`${label} on ${settlementOption}: ${describeError(error)}`)
      }
    }
  }
  if (labels.length > 0) quoted.set(rfq.rfqId, labels)
}

const quoteById = (rfqId: number) =>
  client
    .call("v1/rfq/get", { id: rfqId })
    .then(quote)
    .catch((error: unknown) => log(`RFQ ${rfqId}: ${describeError(error)}`))

/** Every open RFQ the bot is invited on: at start, after a reconnect, and on each requote. */
const quoteAllOpen = async () => {
  const page = await client.call("v1/rfq/list", { role: "maker", status: "open", limit: 1000 })
  const open = new Set(page.results.map((rfq) => rfq.rfqId))
  for (const rfqId of quoted.keys()) if (!open.has(rfqId)) quoted.delete(rfqId)
  for (const rfqId of open) await quoteById(rfqId)
}

const onRfq = (notification: Notification) => {
  const data = notification.data as { event: string; rfqId: number; status?: string }
  if (data.event === "created" && data.status === "open") void quoteById(data.rfqId)
  else if (data.status !== "open") quoted.delete(data.rfqId)
}

await client.login()
const session = client.session({ cancelOnDisconnect: true })
session.onStatus((status) => log(`session ${status}`))
session.onGap(() => void quoteAllOpen().catch((error: unknown) => log(`resync: ${describeError(error)}`)))
await session.subscribe(["rfq.maker"], onRfq)
await quoteAllOpen()
log(`${clientId} quoting with spread ${spread}; Ctrl-C to stop`)
const requote = setInterval(
  () => void quoteAllOpen().catch((error: unknown) => log(`requote: ${describeError(error)}`)),
  requoteMs
)

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  clearInterval(requote)
  try {
    const { cancelledCount } = await client.call("v1/quote/cancel-all", {})
    log(`cancelled ${cancelledCount} quotes`)
  } catch (error) {
    log(`cancel-all: ${describeError(error)}`)
  }
  await session.close()
  client.logout()
  process.exit(0)
}
process.on("SIGINT", () => void stop())
process.on("SIGTERM", () => void stop())
