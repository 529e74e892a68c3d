import type { Spec } from "./AdminCommands.js"
import { CREDENTIALS_HINT, specs } from "./AdminCommands.js"

/** The admin command's help, rendered from the command table: all commands, one noun's, one command's. */

export const PROGRAM = "npm run admin --"

const synopsis = (spec: Spec): string =>
  [
    spec.words,
    ...spec.args.map((a) => (a.optional === true ? `[<${a.name}>]` : `<${a.name}>`)),
    ...(spec.flags ?? []).map((f) => `[${f.flag}]`)
  ].join(" ")

export const usageOf = (spec: Spec): string => `usage: ${PROGRAM} ${synopsis(spec)}`

const pad = (text: string, width: number) => text.padEnd(width)

/** `text` broken into lines of at most 100 characters at spaces. */
const wrap = (text: string): Array<string> => {
  const lines: Array<string> = []
  let current = ""
  for (const word of text.split(" ")) {
    if (current !== "" && current.length + 1 + word.length > 100) {
      lines.push(current)
      current = word
    } else current = current === "" ? word : `${current} ${word}`
  }
  return [...lines, current]
}

/** The help of one command: usage, what it does, each argument and option. */
export const commandHelp = (spec: Spec): string => {
  const rows = [
    ...spec.args.map((a) => [`<${a.name}>`, a.description] as const),
    ...(spec.flags ?? []).map((f) => [f.flag, f.description] as const)
  ]
  const width = Math.max(0, ...rows.map(([name]) => name.length)) + 2
  return [
    usageOf(spec),
    "",
    ...wrap(spec.description),
    ...(rows.length === 0 ? [] : ["", "arguments:", ...rows.map(([n, d]) => `  ${pad(n, width)}${d}`)])
  ].join("\n")
}

export const nouns = [...new Set(specs.map((s) => s.words.split(" ")[0]!))]

const listing = (list: ReadonlyArray<Spec>): Array<string> => {
  const width = Math.max(...list.map((s) => synopsis(s).length)) + 2
  return list.map((s) => `  ${pad(synopsis(s), width)}${s.summary}`)
}

/** The whole help: every command with a line saying what it does. */
export const generalHelp = (): string =>
  [
    `usage: ${PROGRAM} <command> [arguments]      (${PROGRAM} <command> --help for one command)`,
    "",
    "Provisioning: desks, users, API clients, makers, OTC counterparties, key rotation. It reads the",
    "host's environment (DATA_DIR or DATABASE_URL, ...). While a host runs on the embedded database the",
    "command goes through the host (its admin socket in DATA_DIR) and takes effect at once; otherwise it",
    "opens the database itself.",
    "",
    "commands:",
    ...listing(specs),
    "",
    ...wrap(CREDENTIALS_HINT)
  ].join("\n")

export const nounHelp = (noun: string): string =>
  [
    `usage: ${PROGRAM} ${noun} <command>`,
    "",
    ...listing(specs.filter((s) => s.words.startsWith(`${noun} `)))
  ].join("\n")
