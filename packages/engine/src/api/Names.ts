import { textIssue } from "./StorableText.js"

/** The longest desk name, user name or maker id, as the API's own text fields (`textField(64)`). */
export const NAME_MAX_LENGTH = 64

/**
 * Why a name the operator gives (desk, user, maker id, client id) is refused, or undefined: the
 * rules the API applies to client text (`api/StorableText.ts#textIssue`: no U+0000, lone surrogate
 * or control character), not blank, at most `NAME_MAX_LENGTH` characters. These names reach API
 * answers (`GET /v1/exchange/maker`, `GET /v1/account/otc-counterparty`), logs and terminals.
 */
export const nameIssue = (name: string): string | undefined => {
  if (!/\S/.test(name)) return "must not be empty"
  if (name.length > NAME_MAX_LENGTH) return `must be at most ${NAME_MAX_LENGTH} characters`
  return textIssue(name)
}
