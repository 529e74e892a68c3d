import {
  BaseCurrency,
  type Caller,
  type Channel,
  CHANNELS as ENGINE_CHANNELS,
  type EngineEvent,
  type MmpNotice,
  noticeCurrency,
  renderEvent,
  renderMmpNotice
} from "@rfq/engine"
import { Schema } from "effect"

/**
 * The channels a session may subscribe to (`Events.ts#CHANNELS`), each optionally narrowed to one
 * base currency by a suffix: `rfq.maker.BTC`.
 */
export const CHANNELS: ReadonlyArray<Channel> = ENGINE_CHANNELS

/** How many channels one connection may hold at once (every channel with every currency fits). */
export const MAX_CHANNELS_PER_CONNECTION = CHANNELS.length * (1 + BaseCurrency.literals.length)

export interface ChannelSubscription {
  /** The name as the client wrote it; notifications carry it back. */
  readonly name: string
  readonly channel: Channel
  readonly baseCurrency?: BaseCurrency
}

export const parseChannel = (name: string): ChannelSubscription | undefined => {
  const channel = CHANNELS.find((c) => name === c || name.startsWith(`${c}.`))
  if (channel === undefined) return undefined
  if (name === channel) return { name, channel }
  const suffix = name.slice(channel.length + 1)
  const currency = BaseCurrency.literals.find((c) => c === suffix)
  return currency === undefined ? undefined : { name, channel, baseCurrency: currency }
}

const expected = `${CHANNELS.join(", ")}, each optionally followed by .${BaseCurrency.literals.join(" or .")}`

const ChannelName = Schema.String.pipe(
  Schema.filter(
    (name) =>
      parseChannel(name) !== undefined || `unknown channel ${JSON.stringify(name)}; expected ${expected}`
  )
)

/** `v1/subscribe` / `v1/unsubscribe` params: `{channels: [...]}` (a repeated name counts once). */
export const ChannelsParams = Schema.Struct({
  channels: Schema.Array(ChannelName).pipe(
    Schema.minItems(1, { message: () => "must list at least one channel" }),
    Schema.maxItems(MAX_CHANNELS_PER_CONNECTION, {
      message: () => `at most ${MAX_CHANNELS_PER_CONNECTION} channels per request`
    })
  )
})

/**
 * What `caller` receives of `event` on a subscription, or undefined: exactly what REST would show
 * it (the engine's `renderEvent`), narrowed to the subscription's base currency.
 */
export const renderForSubscription = (
  event: LiveEvent,
  subscription: ChannelSubscription,
  caller: Caller,
  render: EventRenderer = renderEvent
): unknown => {
  if (event.type === "mmp") {
    if (subscription.channel !== "mmp.maker") return undefined
    const currency = noticeCurrency(event)
    if (subscription.baseCurrency !== undefined && currency !== subscription.baseCurrency) return undefined
    return renderMmpNotice(event, caller)
  }
  if (subscription.baseCurrency !== undefined && event.view.rfq.baseCurrency !== subscription.baseCurrency) {
    return undefined
  }
  return render(event, subscription.channel, caller)
}

/** What the hub fans out: the RFQs' committed steps, and market-maker protection's notices. */
export type LiveEvent = EngineEvent | MmpNotice

/**
 * The engine's `renderEvent`, or a stand-in in tests of the fan-out. What it answers may depend on
 * the caller's desk and maker id only (the hub shares one rendering among callers alike in those).
 */
export type EventRenderer = (event: EngineEvent, channel: Channel, caller: Caller) => unknown
