import { createContext } from "preact"
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks"
import type { Connection, LiveEvent } from "../api/Connection.js"
import { concerns } from "../api/live.js"

export const ConnectionContext = createContext<Connection | undefined>(undefined)

export const useConnection = (): Connection => {
  const connection = useContext(ConnectionContext)
  if (connection === undefined) throw new Error("useConnection outside a signed-in console")
  return connection
}

/** Calls `listener` on every live event while the component is mounted (the latest `listener`). */
export const useLive = (listener: (event: LiveEvent) => void): void => {
  const connection = useConnection()
  const latest = useRef(listener)
  latest.current = listener
  useEffect(() => connection.listen((event) => latest.current(event)), [connection])
}

export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: unknown
  readonly loading: boolean
  /** Loads again; calls made meanwhile are coalesced into one more load after the current one. */
  readonly reload: () => void
}

/**
 * Data read over REST, loaded when `key` changes and again on `reload`. Answers that arrive out of
 * order never overwrite a newer one; a reload while one is in flight runs once after it, so a burst
 * of notifications costs at most two requests.
 */
export const useLoad = <A>(load: () => Promise<A>, key: string): Loaded<A> => {
  const [state, setState] = useState<{ data: A | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true
  })
  const latestLoad = useRef(load)
  latestLoad.current = load
  const flight = useRef<{ running: boolean; again: boolean; generation: number }>({
    running: false,
    again: false,
    generation: 0
  })
  const run = useCallback(() => {
    const f = flight.current
    if (f.running) {
      f.again = true
      return
    }
    f.running = true
    const generation = f.generation
    setState((s) => ({ ...s, loading: true }))
    latestLoad
      .current()
      .then(
        (data) =>
          generation === flight.current.generation && setState({ data, error: undefined, loading: false }),
        (error: unknown) =>
          generation === flight.current.generation && setState((s) => ({ ...s, error, loading: false }))
      )
      .finally(() => {
        if (generation !== flight.current.generation) return
        f.running = false
        if (f.again) {
          f.again = false
          run()
        }
      })
  }, [])
  useEffect(() => {
    // A new key: forget answers of the old one still in flight.
    flight.current = { running: false, again: false, generation: flight.current.generation + 1 }
    setState({ data: undefined, error: undefined, loading: true })
    run()
  }, [key, run])
  return { ...state, reload: run }
}

/**
 * `useLoad`, loaded again on every live event that may change it: one of `channels` (of one RFQ
 * when `rfqId` is given) or a resync.
 */
export const useLiveLoad = <A>(
  load: () => Promise<A>,
  key: string,
  channels: ReadonlyArray<string>,
  rfqId?: number
): Loaded<A> => {
  const loaded = useLoad(load, key)
  useLive((event) => concerns(event, channels, rfqId) && loaded.reload())
  return loaded
}

export interface Action {
  readonly busy: boolean
  readonly error: unknown
  /** Runs `task` unless one is running; its failure is kept in `error` until the next run. */
  readonly run: (task: () => Promise<unknown>) => Promise<void>
  readonly clear: () => void
}

export const useAction = (): Action => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const running = useRef(false)
  const run = useCallback(async (task: () => Promise<unknown>) => {
    if (running.current) return
    running.current = true
    setBusy(true)
    setError(undefined)
    try {
      await task()
    } catch (e) {
      setError(e)
    } finally {
      running.current = false
      setBusy(false)
    }
  }, [])
  return { busy, error, run, clear: () => setError(undefined) }
}
