/**
 * Editing a draft's rows (legs, a venue's accounts) by their key, which stays while the row's
 * fields change, so an input keeps its focus and its place as the user types.
 */
export const draftRows = <Row extends { readonly key: number }>(
  rows: ReadonlyArray<Row>,
  onChange: (rows: ReadonlyArray<Row>) => void
) => ({
  update: (key: number, patch: Partial<Row>) =>
    onChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row))),
  remove: (key: number) => onChange(rows.filter((row) => row.key !== key)),
  add: (row: Row) => onChange([...rows, row])
})

/** Removes a row; a list keeps its last one (a structure has a leg, a venue an account). */
export const RemoveRow = (props: { readonly count: number; readonly onRemove: () => void }) =>
  props.count > 1 ? (
    <button type="button" class="link" onClick={props.onRemove}>
      remove
    </button>
  ) : null
