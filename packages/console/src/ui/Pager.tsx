import { useState } from "preact/hooks"

/** Pages through a list with the service's cursor: the cursors that led here, to go back. */
export const usePages = () => {
  const [cursors, setCursors] = useState<ReadonlyArray<number>>([0])
  return {
    cursor: cursors[cursors.length - 1] ?? 0,
    page: cursors.length,
    next: (cursor: number) => setCursors((c) => [...c, cursor]),
    back: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    reset: () => setCursors([0])
  }
}

export const Pager = (props: {
  readonly page: number
  readonly next: number | undefined
  readonly onNext: () => void
  readonly onBack: () => void
  readonly total: number | undefined
}) => (
  <div class="row pager">
    <button type="button" disabled={props.page <= 1} onClick={props.onBack}>
      Previous
    </button>
    <span>
      page {props.page}
      {props.total === undefined ? "" : ` · ${props.total} in all`}
    </span>
    <button type="button" disabled={props.next === undefined || props.next === 0} onClick={props.onNext}>
      Next
    </button>
  </div>
)
