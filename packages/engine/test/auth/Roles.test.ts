import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { type Access, mayAccess, requireRole } from "../../src/auth/Roles.js"

const accesses: ReadonlyArray<Access> = ["read", "write", "account"]

describe("requireRole", () => {
  it("a trader may do everything", () => {
    for (const access of accesses) assert.isTrue(mayAccess(["trader"], access), access)
    for (const access of accesses) assert.isTrue(mayAccess(["viewer", "trader"], access), access)
  })

  it("a viewer may read, and neither write nor use the account endpoints", () => {
    assert.deepStrictEqual(
      accesses.map((access) => mayAccess(["viewer"], access)),
      [true, false, false]
    )
  })

  it("a user without a role may do nothing", () => {
    for (const access of accesses) assert.isFalse(mayAccess([], access), access)
  })

  it.effect("a refusal is 403 insufficient permissions", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(requireRole({ roles: ["viewer"] }, "write"))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
        assert.deepStrictEqual(exit.cause.error.toBody(), { code: 403, message: "insufficient permissions" })
      } else assert.fail("expected a failure")
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(requireRole({ roles: ["viewer"] }, "read"))))
    })
  )
})
