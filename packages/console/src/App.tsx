import { useEffect, useState } from "preact/hooks"
import type { Connection, SessionStatus } from "./api/Connection.js"
import { ListsScreen } from "./lists/ListsScreen.js"
import { MakerScreen } from "./maker/MakerScreen.js"
import { SignIn } from "./SignIn.js"
import { TakerScreen } from "./taker/TakerScreen.js"
import { ConnectionContext } from "./ui/hooks.js"

const TABS = [
  { id: "taker", title: "Taker: request quotes" },
  { id: "maker", title: "Maker: quote" },
  { id: "lists", title: "RFQs and quotes" }
] as const
type Tab = (typeof TABS)[number]["id"]

const STATUS_TEXT: Record<SessionStatus, string> = {
  connecting: "live: connecting…",
  open: "live",
  reconnecting: "live: reconnecting…",
  closed: "live: disconnected"
}

/** Signed out: the sign-in form. Signed in: the three screens, the live session's state, sign out. */
export const App = () => {
  const [connection, setConnection] = useState<Connection | undefined>(undefined)
  const [tab, setTab] = useState<Tab>("taker")
  const [status, setStatus] = useState<SessionStatus>("connecting")
  useEffect(() => {
    if (connection === undefined) return
    setStatus(connection.status)
    return connection.onStatus(setStatus)
  }, [connection])
  if (connection === undefined) return <SignIn onSignedIn={setConnection} />
  return (
    <ConnectionContext.Provider value={connection}>
      <header class="top">
        <strong>RFQ console</strong>
        <nav>
          {TABS.map((t) => (
            <button
              key={t.id}
              type="button"
              class={t.id === tab ? "tab active" : "tab"}
              aria-pressed={t.id === tab}
              onClick={() => setTab(t.id)}
            >
              {t.title}
            </button>
          ))}
        </nav>
        <span class={`live ${status}`} data-testid="live-status">
          {STATUS_TEXT[status]}
        </span>
        <span>
          signed in as <strong>{connection.clientId}</strong>
        </span>
        <button
          type="button"
          onClick={() => {
            void connection.close()
            setConnection(undefined)
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        {tab === "taker" && <TakerScreen />}
        {tab === "maker" && <MakerScreen />}
        {tab === "lists" && <ListsScreen />}
      </main>
    </ConnectionContext.Provider>
  )
}
