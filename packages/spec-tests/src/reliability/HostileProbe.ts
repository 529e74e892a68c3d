import type { Scale } from "./Figures.js"
import { type Answer, call } from "./Http.js"
import type { Target } from "./HostileTargets.js"
import type { WsConnection } from "./WsClient.js"

/**
 * The probes of the hostile-strings item: the hostile variants, and one hostile value sent in one
 * field over REST and JSON-RPC with the answer it must get (see HostileStrings.ts).
 */

export interface Variant {
  readonly name: string
  readonly text: (valid: string) => string
}

const refusedVariants: ReadonlyArray<Variant> = [
  { name: "U+0000", text: (v) => `${v}\u0000` },
  { name: "lone high surrogate", text: (v) => `\ud800${v}` },
  { name: "lone low surrogate", text: (v) => `${v}\udc00` },
  { name: "reversed surrogate pair", text: (v) => `${v}\udc00\ud800` },
  { name: "escape sequence", text: (v) => `\u001b[31m${v}` },
  { name: "newline", text: (v) => `${v}\nforged log line` },
  { name: "C1 control", text: (v) => `${v}\u0085` },
  { name: "DEL", text: (v) => `${v}\u007f` },
  { name: "overlong", text: (v) => `${v}${"x".repeat(10_000)}` }
]

const acceptedVariants: ReadonlyArray<Variant> = [
  { name: "right-to-left override", text: (v) => `\u202e${v}\u202c` },
  { name: "emoji with joiners", text: (v) => `${v}👩‍💻` },
  { name: "combining mark", text: (v) => `${v}e\u0301` },
  { name: "astral CJK", text: (v) => `${v}𠀋` },
  { name: "inner BOM and noncharacter", text: (v) => `${v}\ufeff\uffff` }
]

export const variantsFor = (scale: Scale) => ({
  refused:
    scale === "full" ? refusedVariants : refusedVariants.filter((_, i) => i === 0 || i === 1 || i === 8),
  accepted: scale === "full" ? acceptedVariants : acceptedVariants.slice(0, 1)
})

/** Percent-encoding that also carries lone surrogates (as the invalid UTF-8 their code unit gives). */
const percentEncode = (text: string): string => {
  let out = ""
  for (const char of text) {
    const code = char.charCodeAt(0)
    if (char.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join("")
    } else out += encodeURIComponent(char)
  }
  return out
}

const queryOf = (fields: Record<string, unknown>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k}=${percentEncode(String(v))}`)
    .join("&")

export type Kind = "serverErrors" | "unnamed" | "stateChanges" | "storedDifferently"

export interface Tally {
  sent: number
  readonly counts: Record<Kind, number>
  readonly problems: Array<{ readonly kind: Kind; readonly text: string }>
}

/** Counts a failed check of `kind`; the first few are kept for the log. */
export const note = (t: Tally, kind: Kind, text: string) => {
  t.counts[kind]++
  if (t.problems.length < 20) t.problems.push({ kind, text })
}

export interface Clients {
  readonly tokens: Record<"taker" | "maker", string>
  readonly sessions: Record<"taker" | "maker" | "none", WsConnection>
}

const restAnswer = (
  base: string,
  target: Target,
  value: Record<string, unknown>,
  token: string | undefined
) => {
  const rest = target.rest!
  // A URL is bounded by the server's header limit: 1000 characters are overlong for every field.
  const short = Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, typeof v === "string" ? v.slice(0, 1000) : v])
  )
  if (target.from === "path") {
    return call(base, rest.method, rest.path.replace("{id}", percentEncode(String(short.id))), { token })
  }
  if (target.from === "query") return call(base, rest.method, `${rest.path}?${queryOf(short)}`, { token })
  return call(base, rest.method, rest.path, {
    token,
    body: JSON.stringify(value),
    headers: { "content-type": "application/json" }
  })
}

/** JSON.stringify writes a lone surrogate as its `\ud800` escape: the frame is valid UTF-8. */
const rpcAnswer = async (ws: WsConnection, method: string, params: unknown, id: number) => {
  const reply = (await ws.exchange(JSON.stringify({ jsonrpc: "2.0", id, method, params }), 10_000)) as
    | { id?: unknown; error?: { code: number; data?: { reason?: unknown } }; result?: unknown }
    | undefined
  return reply
}

/** One hostile value in one field over both protocols; `refused` says which answer it must get. */
export const probe = async (
  base: string,
  clients: Clients,
  target: Target,
  field: string,
  text: string,
  refused: boolean,
  t: Tally,
  what: string
) => {
  const value = withField(target.base, pathOf(field), text) as Record<string, unknown>
  if (target.rest !== undefined) {
    t.sent++
    const token = target.party === "none" ? undefined : clients.tokens[target.party]
    let a: Answer
    try {
      a = await restAnswer(base, target, value, token)
    } catch (error) {
      return note(t, "serverErrors", `${what} REST: no answer (${String(error)})`)
    }
    const body = a.body as { reason?: unknown } | undefined
    if (a.status >= 500) note(t, "serverErrors", `${what} REST: ${a.status} ${a.text.slice(0, 160)}`)
    else if (refused && (a.status < 400 || !namesField(body?.reason, field))) {
      note(t, "unnamed", `${what} REST: ${a.status} ${a.text.slice(0, 160)}`)
    }
  }
  if (target.rpc !== undefined) {
    t.sent++
    const reply = await rpcAnswer(clients.sessions[target.party], target.rpc, value, t.sent)
    const code = reply?.error?.code
    if (reply === undefined || code === -32603) {
      note(t, "serverErrors", `${what} JSON-RPC: ${JSON.stringify(reply)?.slice(0, 160)}`)
    } else if (
      refused &&
      (!(code === -32602 || code === -32004) || !namesField(reply.error?.data?.reason, field))
    ) {
      note(t, "unnamed", `${what} JSON-RPC: ${JSON.stringify(reply).slice(0, 160)}`)
    }
  }
}

/** Hostile text as a JSON-RPC `id` and `method`: a clean -32601 echoing the id, the session open. */
export const probeFrame = async (ws: WsConnection, text: string, t: Tally, what: string) => {
  t.sent++
  const reply = (await ws.exchange(JSON.stringify({ jsonrpc: "2.0", id: text, method: text }), 10_000)) as
    | { id?: unknown; error?: { code?: number } }
    | undefined
  if (
    reply === undefined ||
    reply.error?.code !== -32601 ||
    reply.id !== text ||
    ws.socket.readyState !== 1
  ) {
    note(t, "serverErrors", `${what} as id and method: ${JSON.stringify(reply)?.slice(0, 160)}`)
  }
}

/** `legs[0].instrumentName` → ["legs", 0, "instrumentName"]. */
export const pathOf = (field: string): Array<string | number> =>
  field.split(/\.|(?=\[)/).map((part) => (part.startsWith("[") ? Number(part.slice(1, -1)) : part))

/** A copy of `value` with `field` set to `text`. */
export const withField = (value: unknown, path: ReadonlyArray<string | number>, text: string): unknown => {
  if (path.length === 0) return text
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? withField(v, rest, text) : v))
  const record = value as Record<string, unknown>
  return { ...record, [head!]: withField(record[head as string], rest, text) }
}

/** Whether a refusal's reasons name `field` (`field: …`, or a part of it: `field[0]…`). */
export const namesField = (reasons: unknown, field: string): boolean =>
  Array.isArray(reasons) &&
  reasons.some(
    (r) =>
      typeof r === "string" &&
      (r.startsWith(`${field}:`) || r.startsWith(`${field}[`) || r.startsWith(`${field}.`))
  )
