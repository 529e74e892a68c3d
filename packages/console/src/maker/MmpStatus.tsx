import { ErrorBox } from "../ui/ErrorBox.js"
import { num, time } from "../ui/format.js"
import { useAction, useConnection, useLiveLoad } from "../ui/hooks.js"

/**
 * The desk's market-maker protection per base currency (`GET /v1/mmp/status`, channel `mmp.maker`):
 * frozen or not, the fills in the current window, and a reset. Nothing when none is configured.
 */
export const MmpStatus = () => {
  const connection = useConnection()
  const status = useLiveLoad(() => connection.call("v1/mmp/status", {}), "mmp-status", [
    "mmp.maker",
    "rfq_quote.maker"
  ])
  const reset = useAction()
  if (status.error === undefined && (status.data ?? []).length === 0) return null
  return (
    <div class="mmp">
      <h3>Market-maker protection</h3>
      <ErrorBox error={status.error} />
      <ErrorBox error={reset.error} />
      {(status.data ?? []).map((s) => (
        <p key={s.baseCurrency} class={s.frozen ? "status failed" : ""}>
          {s.baseCurrency}:{" "}
          {s.frozen
            ? `frozen${s.frozenUntil === undefined ? " until reset" : ` until ${time(s.frozenUntil)}`}`
            : "active"}{" "}
          · window: {num(s.window.amount)} traded, {s.window.trades} fills, delta {num(s.window.delta)}{" "}
          {s.frozen && (
            <button
              type="button"
              disabled={reset.busy}
              onClick={() =>
                reset.run(async () => {
                  await connection.call("v1/mmp/reset", { baseCurrency: s.baseCurrency })
                  status.reload()
                })
              }
            >
              Reset
            </button>
          )}
        </p>
      ))}
    </div>
  )
}
