import { cutText } from "@rfq/engine/api"

/**
 * Text the admin command prints that came from someone else (an argument, a stored name): control
 * characters and lone surrogates are written as `\uXXXX`, so that a hostile name cannot move the
 * cursor, recolour or clear the operator's terminal (C1 `U+009B` is a terminal's CSI). Names made
 * by this command cannot hold them (`@rfq/engine/api` `nameIssue`); rows written before that rule can.
 */
export const printable = (text: string): string => {
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const high = code >= 0xd800 && code <= 0xdbff
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
    if (high && next >= 0xdc00 && next <= 0xdfff) {
      out += text[i]! + text[i + 1]!
      i++
    } else if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff)) {
      out += `\\u${code.toString(16).padStart(4, "0")}`
    } else out += text[i]!
  }
  return out
}

/** An argument quoted in an error line: printable, and cut after 40 characters. */
export const quoted = (text: string): string => {
  const shown = printable(text)
  return `"${cutText(shown, 40)}"`
}
