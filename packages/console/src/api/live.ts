import type { LiveEvent } from "./Connection.js"

/** The parts of a notification the screens route on; the rest is the object as REST shows it. */
export interface LiveData {
  readonly channel: string
  readonly event: string | undefined
  readonly rfqId: number | undefined
  readonly rfqQuoteId: number | undefined
  readonly data: Record<string, unknown>
}

const channelBase = (channel: string) => channel.split(".").slice(0, 2).join(".")

/** The notification's routing fields, or undefined for a resync. `channel` without a currency suffix. */
export const liveData = (event: LiveEvent): LiveData | undefined => {
  if (event.kind !== "notification") return undefined
  const { channel, data } = event.notification
  const record = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {}
  const number = (key: string) => (typeof record[key] === "number" ? (record[key] as number) : undefined)
  return {
    channel: channelBase(channel),
    event: typeof record["event"] === "string" ? record["event"] : undefined,
    rfqId: number("rfqId"),
    rfqQuoteId: number("rfqQuoteId"),
    data: record
  }
}

/** Whether a live event may change what a screen about `channels` (and one RFQ) shows. */
export const concerns = (event: LiveEvent, channels: ReadonlyArray<string>, rfqId?: number): boolean => {
  if (event.kind === "resync") return true
  const live = liveData(event)
  return (
    live !== undefined && channels.includes(live.channel) && (rfqId === undefined || live.rfqId === rfqId)
  )
}
