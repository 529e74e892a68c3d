import { Layer } from "effect"
import { MmpLive } from "./Mmp.js"
import { MmpNoticesLive } from "./MmpNotices.js"
import { SqlMmpStoreLive } from "./SqlMmpStore.js"

/**
 * Market-maker protection over the `SqlClient` in context: the service, its SQL store and its
 * notices (on a `ClusterBus` when `bus` provides one, several hosts; in memory otherwise).
 */
export const mmpLayer = <E = never, R = never>(bus?: Layer.Layer<never, E, R> | Layer.Layer<any, E, R>) => {
  const notices = bus === undefined ? MmpNoticesLive : MmpNoticesLive.pipe(Layer.provide(bus))
  return MmpLive.pipe(Layer.provideMerge(Layer.merge(SqlMmpStoreLive, notices)))
}
