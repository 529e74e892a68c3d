import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { parseBearerToken } from "../../src/auth/BearerToken.js"

const outcome = (header: string | undefined): string =>
  Either.match(parseBearerToken(header), {
    onLeft: (error) => error.message,
    onRight: (token) => `token ${token}`
  })

describe("parseBearerToken", () => {
  it("takes the token of a Bearer header, the scheme in any case", () => {
    assert.strictEqual(outcome("Bearer abc.def.ghi"), "token abc.def.ghi")
    assert.strictEqual(outcome("bearer abc.def.ghi"), "token abc.def.ghi")
    assert.strictEqual(outcome("BEARER a-b_c~d+e/f=="), "token a-b_c~d+e/f==")
  })

  it("no header, a blank one or the scheme alone is a missing bearer token", () => {
    for (const header of [undefined, "", "   ", "Bearer", "Bearer ", "bearer   "]) {
      assert.strictEqual(outcome(header), "missing bearer token", JSON.stringify(header))
    }
  })

  it("anything else is an invalid authorization header", () => {
    const invalid = [
      "Basic dXNlcjpwYXNz",
      "abc.def.ghi",
      "Bearer  abc.def.ghi",
      "Bearer\tabc.def.ghi",
      " Bearer abc.def.ghi",
      "Bearer abc.def.ghi ",
      "Bearer abc def",
      "Bearer abc.def.ghi, Bearer xyz",
      "Bearer a=b",
      "Bearerabc.def.ghi",
      "Token abc"
    ]
    for (const header of invalid) {
      assert.strictEqual(outcome(header), "invalid authorization header", JSON.stringify(header))
    }
  })
})
