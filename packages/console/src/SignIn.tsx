import { useState } from "preact/hooks"
import { Connection } from "./api/Connection.js"
import { ErrorBox } from "./ui/ErrorBox.js"
import { useAction } from "./ui/hooks.js"

/**
 * Client id and secret, exchanged for tokens held in memory only: nothing is written to
 * localStorage, sessionStorage or a cookie, so a reload asks again.
 */
export const SignIn = ({ onSignedIn }: { readonly onSignedIn: (connection: Connection) => void }) => {
  const [clientId, setClientId] = useState("")
  const [secret, setSecret] = useState("")
  const action = useAction()
  return (
    <div class="sign-in panel">
      <h1>RFQ console</h1>
      <p>
        Sign in with your API client. Takers request quotes on option and future structures; makers answer
        them.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          void action.run(async () =>
            onSignedIn(await Connection.signIn(location.origin, clientId.trim(), secret))
          )
        }}
      >
        <label class="block">
          Client id
          <input
            name="clientId"
            autocomplete="username"
            value={clientId}
            onInput={(e) => setClientId(e.currentTarget.value)}
          />
        </label>
        <label class="block">
          Client secret
          <input
            name="clientSecret"
            type="password"
            autocomplete="current-password"
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
        </label>
        <ErrorBox error={action.error} />
        <button
          type="submit"
          class="primary"
          disabled={action.busy || clientId.trim() === "" || secret === ""}
        >
          {action.busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p class="hint">
        Demo start: <code>demo-taker</code> / <code>demo-taker-secret</code> (taker desk),{" "}
        <code>demo-maker-1</code> / <code>demo-maker-1-secret</code> (maker-1; also maker-2, maker-3). Tokens
        stay in this tab only.
      </p>
    </div>
  )
}
