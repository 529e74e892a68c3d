import type { Listing } from "./Instruments.js"
import { listingLabel } from "./Instruments.js"
import { type Direction, type HedgeDraft, type LegDraft, newKey } from "./RfqDraft.js"

interface LegsProps {
  readonly legs: ReadonlyArray<LegDraft>
  readonly onChange: (legs: ReadonlyArray<LegDraft>) => void
  readonly instruments: ReadonlyArray<Listing>
}

/** The datalist every instrument field offers; free typing stays possible. */
export const InstrumentOptions = ({
  id,
  listings
}: {
  readonly id: string
  readonly listings: ReadonlyArray<Listing>
}) => (
  <datalist id={id}>
    {listings.map((l) => (
      <option key={l.instrumentName} value={l.instrumentName} label={listingLabel(l)} />
    ))}
  </datalist>
)

const DirectionSelect = (props: {
  readonly value: Direction
  readonly onChange: (d: Direction) => void
  readonly name: string
}) => (
  <select
    aria-label={props.name}
    value={props.value}
    onChange={(e) => props.onChange(e.currentTarget.value === "sell" ? "sell" : "buy")}
  >
    <option value="buy">buy</option>
    <option value="sell">sell</option>
  </select>
)

/** The legs of the structure: direction, instrument (from the venues' listing) and ratio. */
export const LegsEditor = ({ legs, onChange, instruments }: LegsProps) => {
  const update = (key: number, patch: Partial<LegDraft>) =>
    onChange(legs.map((l) => (l.key === key ? { ...l, ...patch } : l)))
  const known = new Map(instruments.map((l) => [l.instrumentName, l]))
  return (
    <fieldset class="legs">
      <legend>Legs</legend>
      <InstrumentOptions id="leg-instruments" listings={instruments} />
      <table>
        <thead>
          <tr>
            <th>#</th>
            <th>side</th>
            <th>instrument</th>
            <th>ratio</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {legs.map((leg, i) => {
            const listing = known.get(leg.instrumentName.trim())
            return (
              <tr key={leg.key} data-leg={i + 1}>
                <td>{i + 1}</td>
                <td>
                  <DirectionSelect
                    name={`leg ${i + 1} side`}
                    value={leg.direction}
                    onChange={(direction) => update(leg.key, { direction })}
                  />
                </td>
                <td>
                  <input
                    aria-label={`leg ${i + 1} instrument`}
                    list="leg-instruments"
                    placeholder="e.g. BTC-27DEC30-90000-C"
                    value={leg.instrumentName}
                    onInput={(e) => update(leg.key, { instrumentName: e.currentTarget.value })}
                  />
                  <div class="hint">
                    {leg.instrumentName.trim() === ""
                      ? ""
                      : listing === undefined
                        ? "not listed on every chosen venue"
                        : listingLabel(listing)}
                  </div>
                </td>
                <td>
                  <input
                    aria-label={`leg ${i + 1} ratio`}
                    class="short"
                    inputMode="decimal"
                    value={leg.ratio}
                    onInput={(e) => update(leg.key, { ratio: e.currentTarget.value })}
                  />
                </td>
                <td>
                  {legs.length > 1 && (
                    <button
                      type="button"
                      class="link"
                      onClick={() => onChange(legs.filter((l) => l.key !== leg.key))}
                    >
                      remove
                    </button>
                  )}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
      <button
        type="button"
        onClick={() =>
          onChange([...legs, { key: newKey(), direction: "buy", instrumentName: "", ratio: "1" }])
        }
      >
        Add leg
      </button>
    </fieldset>
  )
}

interface HedgeProps {
  readonly hedge: HedgeDraft | undefined
  readonly onChange: (hedge: HedgeDraft | undefined) => void
  readonly instruments: ReadonlyArray<Listing>
}

/** The optional hedge: a future or perpetual with its own amount and price. */
export const HedgeEditor = ({ hedge, onChange, instruments }: HedgeProps) => {
  const futures = instruments.filter((l) => l.kind === "future" || l.kind === "perpetual")
  return (
    <fieldset class="hedge">
      <legend>
        <label>
          <input
            type="checkbox"
            checked={hedge !== undefined}
            onChange={(e) =>
              onChange(
                e.currentTarget.checked
                  ? { direction: "sell", instrumentName: "", amount: "", price: "" }
                  : undefined
              )
            }
          />{" "}
          Hedge (optional)
        </label>
      </legend>
      <InstrumentOptions id="hedge-instruments" listings={futures} />
      {hedge !== undefined && (
        <div class="row">
          <DirectionSelect
            name="hedge side"
            value={hedge.direction}
            onChange={(direction) => onChange({ ...hedge, direction })}
          />
          <input
            aria-label="hedge instrument"
            list="hedge-instruments"
            placeholder="e.g. BTC-PERPETUAL"
            value={hedge.instrumentName}
            onInput={(e) => onChange({ ...hedge, instrumentName: e.currentTarget.value })}
          />
          <label>
            amount{" "}
            <input
              class="short"
              aria-label="hedge amount"
              value={hedge.amount}
              onInput={(e) => onChange({ ...hedge, amount: e.currentTarget.value })}
            />
          </label>
          <label>
            price{" "}
            <input
              class="short"
              aria-label="hedge price"
              value={hedge.price}
              onInput={(e) => onChange({ ...hedge, price: e.currentTarget.value })}
            />
          </label>
        </div>
      )}
    </fieldset>
  )
}
