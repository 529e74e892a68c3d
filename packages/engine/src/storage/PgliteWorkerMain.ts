import { parentPort, workerData } from "node:worker_threads"
import { openCallerThreadSession, type PgliteSession } from "./PgliteSession.js"
import { type WorkerReply, type WorkerRequest, type WorkerStart, wireError } from "./PgliteWorkerProtocol.js"

/**
 * The thread that runs a PGlite of its own (`PgliteWorker.ts` starts it): opens the database
 * named in `workerData`, answers `ready` (or the failure to open), then runs each request on the
 * session in the order it came and answers it. `close` closes the database, answers, and lets the
 * thread end.
 */
const port = parentPort
if (port === null) throw new Error("PgliteWorkerMain runs only as a worker thread")
const start = workerData as WorkerStart

const answer = (reply: WorkerReply, transfer: ReadonlyArray<ArrayBuffer> = []) =>
  port.postMessage(reply, transfer as Array<ArrayBuffer>)

const run = async (session: PgliteSession, request: WorkerRequest): Promise<void> => {
  try {
    switch (request.op) {
      case "query":
        return answer({
          id: request.id,
          result: await session.query(request.text, request.params, request.options)
        })
      case "exec":
        return answer({ id: request.id, result: await session.exec(request.text, request.options) })
      case "dump": {
        const bytes = await (await session.dumpDataDir()).arrayBuffer()
        return answer({ id: request.id, result: bytes }, [bytes])
      }
      case "close":
        await session.close()
        answer({ id: request.id, result: null })
        port.close()
        return
    }
  } catch (error) {
    answer({ id: request.id, error: wireError(error) })
  }
}

const open = async (): Promise<void> => {
  let session: PgliteSession
  try {
    session = await openCallerThreadSession(
      start.dataDir,
      start.loadDataDir === undefined ? undefined : new Blob([start.loadDataDir])
    )
  } catch (error) {
    answer({ id: 0, error: wireError(error) })
    port.close()
    return
  }
  // One request at a time, in arrival order: the caller sends statements of many fibers without
  // waiting for their answers (`PgliteSession.ordered`), and this chain is what keeps them, and a
  // close after them, in that order.
  let chain = Promise.resolve()
  port.on("message", (request: WorkerRequest) => {
    chain = chain.then(() => run(session, request))
  })
  answer({ id: 0, result: null })
}

void open()
