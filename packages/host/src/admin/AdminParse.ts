import { nameIssue } from "@rfq/engine/api"
import { type AdminCommand, type Argument, specs } from "./AdminCommands.js"
import { commandHelp, generalHelp, nounHelp, nouns, PROGRAM, usageOf } from "./AdminHelp.js"
import { quoted } from "./AdminText.js"

/**
 * The admin command line parsed against the command table. Pure (no database, no lock), so
 * `--help` and a wrong argument are answered at once, whether or not a host runs; the host parses
 * the words it receives on its admin socket with this same function, so no command reaches the
 * database unchecked.
 */

export type Parsed =
  | { readonly _tag: "Help"; readonly text: string }
  | { readonly _tag: "Wrong"; readonly message: string }
  | { readonly _tag: "Run"; readonly words: string; readonly command: AdminCommand }

const isHelp = (word: string) => word === "--help" || word === "-h"

const ID = /^[1-9][0-9]{0,15}$/

const readValue = (arg: Argument, text: string): { value: string | number } | { problem: string } => {
  switch (arg.kind) {
    case "id":
      return ID.test(text) && Number.isSafeInteger(Number(text))
        ? { value: Number(text) }
        : { problem: `<${arg.name}> must be a positive whole number, got ${quoted(text)}` }
    case "role":
      return text === "trader" || text === "viewer"
        ? { value: text }
        : { problem: `<${arg.name}> must be trader or viewer, got ${quoted(text)}` }
    case "name": {
      const issue = nameIssue(text)
      return issue === undefined ? { value: text } : { problem: `<${arg.name}> ${issue}` }
    }
  }
}

/** The words of a command line (without the program) as a command, a help text, or what is wrong. */
export const parseAdmin = (argv: ReadonlyArray<string>): Parsed => {
  const words = argv[0] === "help" ? [...argv.slice(1), "--help"] : argv
  const [noun, verb] = words
  const spec = specs.find((s) => s.words === `${noun} ${verb}`)
  const wantsHelp = words.some(isHelp) || words.length === 0
  if (spec === undefined) {
    const known = noun !== undefined && nouns.includes(noun)
    if (wantsHelp) return { _tag: "Help", text: known ? nounHelp(noun) : generalHelp() }
    if (!known)
      return {
        _tag: "Wrong",
        message: `unknown command ${quoted(noun ?? "")}; the commands are ${nouns.join(", ")} (${PROGRAM} --help)`
      }
    const what =
      verb === undefined ? `${noun} needs a command` : `unknown command ${quoted(`${noun} ${verb}`)}`
    return { _tag: "Wrong", message: `${what}\n${nounHelp(noun)}` }
  }
  if (wantsHelp) return { _tag: "Help", text: commandHelp(spec) }
  const wrong = (problem: string): Parsed => ({
    _tag: "Wrong",
    message: `${spec.words}: ${problem}\n${usageOf(spec)}`
  })
  const flags = new Set<string>()
  const positional: Array<string> = []
  for (const word of words.slice(2)) {
    if (word.startsWith("--")) {
      if (!(spec.flags ?? []).some((f) => f.flag === word)) return wrong(`unknown option ${quoted(word)}`)
      flags.add(word)
    } else positional.push(word)
  }
  if (positional.length > spec.args.length)
    return wrong(`unexpected argument ${quoted(positional[spec.args.length]!)}`)
  const values: Array<string | number | undefined> = []
  for (const [i, arg] of spec.args.entries()) {
    const text = positional[i]
    if (text === undefined) {
      if (arg.optional === true) {
        values.push(undefined)
        continue
      }
      return wrong(`missing <${arg.name}>`)
    }
    const value = readValue(arg, text)
    if ("problem" in value) return wrong(value.problem)
    values.push(value.value)
  }
  return { _tag: "Run", words: spec.words, command: spec.build(values, flags) }
}
