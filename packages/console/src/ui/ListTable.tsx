import type { ComponentChildren, JSX } from "preact"

/** A column of a list: its heading and its cell; `cellClass` styles a cell by its row (a status). */
export interface Column<Row> {
  readonly head: string
  readonly cell: (row: Row) => ComponentChildren
  readonly cellClass?: (row: Row) => string
}

/** The status column: its cell coloured by the status (`styles.css`, `.status.<name>`). */
export const statusColumn = <Row extends { readonly status: string }>(): Column<Row> => ({
  head: "status",
  cell: (row) => row.status,
  cellClass: (row) => `status ${row.status}`
})

type RowAttributes = JSX.HTMLAttributes<HTMLTableRowElement> & {
  readonly [data: `data-${string}`]: string | number
}

/** A row chosen by a click, marked while it is the chosen one. */
export const selectableRow = (selected: boolean, onSelect: () => void): RowAttributes => ({
  class: selected ? "selected clickable" : "clickable",
  onClick: onSelect
})

/**
 * Every list of the console: a heading per column, a row per element. `rows` undefined is a list
 * not loaded yet; a loaded empty one shows `empty` below the table when given.
 */
export const ListTable = <Row,>(props: {
  readonly columns: ReadonlyArray<Column<Row>>
  readonly rows: ReadonlyArray<Row> | undefined
  readonly rowKey: (row: Row) => string | number
  readonly rowAttributes?: (row: Row, index: number) => RowAttributes
  readonly class?: string
  readonly empty?: string
}) => (
  <>
    <table class={props.class ?? "list"}>
      <thead>
        <tr>
          {props.columns.map((column, i) => (
            <th key={i}>{column.head}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {(props.rows ?? []).map((row, index) => (
          <tr key={props.rowKey(row)} {...props.rowAttributes?.(row, index)}>
            {props.columns.map((column, i) => (
              <td key={i} class={column.cellClass?.(row)}>
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
    {props.empty !== undefined && props.rows !== undefined && props.rows.length === 0 && (
      <p class="hint">{props.empty}</p>
    )}
  </>
)
