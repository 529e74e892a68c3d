import { ShortField, ShortInput } from "../ui/Fields.js"
import { draftRows, RemoveRow } from "./DraftRows.js"
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
  const rows = draftRows(legs, onChange)
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
                    onChange={(direction) => rows.update(leg.key, { direction })}
                  />
                </td>
                <td>
                  <input
                    aria-label={`leg ${i + 1} instrument`}
                    list="leg-instruments"
                    placeholder="e.g. BTC-27DEC30-90000-C"
                    value={leg.instrumentName}
                    onInput={(e) => rows.update(leg.key, { instrumentName: e.currentTarget.value })}
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
                  <ShortInput
                    name={`leg ${i + 1} ratio`}
                    inputMode="decimal"
                    value={leg.ratio}
                    onInput={(ratio) => rows.update(leg.key, { ratio })}
                  />
                </td>
                <td>
                  <RemoveRow count={legs.length} onRemove={() => rows.remove(leg.key)} />
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
      <button
        type="button"
        onClick={() => rows.add({ key: newKey(), direction: "buy", instrumentName: "", ratio: "1" })}
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
          <ShortField
            label="amount"
            name="hedge amount"
            value={hedge.amount}
            onInput={(amount) => onChange({ ...hedge, amount })}
          />
          <ShortField
            label="price"
            name="hedge price"
            value={hedge.price}
            onInput={(price) => onChange({ ...hedge, price })}
          />
        </div>
      )}
    </fieldset>
  )
}
