import { concerns } from "../api/live.js"
import { ErrorBox } from "../ui/ErrorBox.js"
import { num, time } from "../ui/format.js"
import { useConnection, useLive, useLoad } from "../ui/hooks.js"

/** The public block-trade tape (`GET /v1/trades/public`, channel `trades`): no desk, maker or account. */
export const Tape = () => {
  const connection = useConnection()
  const tape = useLoad(() => connection.call("v1/trades/public", { limit: 20 }), "tape")
  useLive((event) => concerns(event, ["trades"]) && tape.reload())
  return (
    <section class="panel tape">
      <h2>Public tape</h2>
      <ErrorBox error={tape.error} />
      <table class="list">
        <thead>
          <tr>
            <th>at</th>
            <th>structure</th>
            <th>price</th>
            <th>amount</th>
            <th>venue</th>
          </tr>
        </thead>
        <tbody>
          {(tape.data?.results ?? []).map((t) => (
            <tr key={t.tradeId}>
              <td>{time(t.createdAt)}</td>
              <td>{t.description}</td>
              <td>{num(t.price)}</td>
              <td>{num(t.amount)}</td>
              <td>{t.settlementOption}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {tape.data !== undefined && tape.data.results.length === 0 && <p class="hint">No block trade yet.</p>}
    </section>
  )
}
