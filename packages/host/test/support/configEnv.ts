import { ConfigProvider, Effect, Either } from "effect"
import { type HostConfig, loadHostConfig } from "../../src/Config.js"

/** The configuration read from exactly `env`: the config, or the one-line error message. */
export const load = (env: Record<string, string>): Effect.Effect<Either.Either<HostConfig, string>> =>
  loadHostConfig.pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
    Effect.either,
    Effect.map(Either.mapLeft((error) => error.message))
  )

/** The configuration `env` makes; a configuration error fails the test. */
export const loaded = (env: Record<string, string>): Effect.Effect<HostConfig> =>
  Effect.flatMap(load(env), (result) =>
    Either.isRight(result) ? Effect.succeed(result.right) : Effect.dieMessage(`unexpected: ${result.left}`)
  )

/** The error line `env` makes; a valid configuration fails the test. */
export const problem = (env: Record<string, string>): Effect.Effect<string> =>
  Effect.flatMap(load(env), (result) =>
    Either.isLeft(result) ? Effect.succeed(result.left) : Effect.dieMessage("expected a configuration error")
  )
