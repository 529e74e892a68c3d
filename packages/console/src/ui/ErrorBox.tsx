import { showError } from "../api/errors.js"

/** A failure as the service worded it; nothing when there is none. */
export const ErrorBox = ({ error }: { readonly error: unknown }) => {
  if (error === undefined || error === null) return null
  const shown = showError(error)
  return (
    <div class="error" role="alert">
      <strong>{shown.title}</strong>
      {shown.reasons.length > 0 && (
        <ul>
          {shown.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
    </div>
  )
}
