import { createHmac } from "node:crypto"

/**
 * A copy of a real access token re-signed with the host's `JWT_SECRET` (which the test chose) to
 * expire in `seconds`: the only way to get a short-lived token from a host whose tokens live 300 s.
 * As the black-box suite does (`packages/spec-tests/src/hosted/ForgedTokens.ts`).
 */
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

export const shortLived = (realToken: string, jwtSecret: string, seconds: number): string => {
  const payload = JSON.parse(Buffer.from(realToken.split(".")[1] ?? "", "base64url").toString("utf8"))
  const now = Math.floor(Date.now() / 1000)
  const head = `${encode({ alg: "HS256", typ: "JWT" })}.${encode({ ...payload, iat: now, exp: now + seconds })}`
  return `${head}.${createHmac("sha256", Buffer.from(jwtSecret, "utf8")).update(head).digest("base64url")}`
}
