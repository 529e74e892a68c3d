interface ShortInputProps {
  /** The accessible name. */
  readonly name: string
  readonly value: string
  readonly onInput: (value: string) => void
  readonly placeholder?: string
  readonly inputMode?: "decimal"
}

/** A short text input: an amount, a price, a ratio, a percentage, an id. */
const shortInput = (props: ShortInputProps) => ({
  "aria-label": props.name,
  class: "short",
  inputMode: props.inputMode,
  placeholder: props.placeholder,
  value: props.value,
  onInput: (e: { readonly currentTarget: HTMLInputElement }) => props.onInput(e.currentTarget.value)
})

export const ShortInput = (props: ShortInputProps) => <input {...shortInput(props)} />

/** A short input with its visible label before it and a unit (`suffix`) after it. */
export const ShortField = (props: ShortInputProps & { readonly label: string; readonly suffix?: string }) => (
  <label>
    {props.label} <input {...shortInput(props)} />
    {props.suffix === undefined ? null : ` ${props.suffix}`}
  </label>
)

/** The problems of a draft, in the service's words. */
export const IssueList = (props: {
  readonly name: string
  readonly issues: ReadonlyArray<string>
  readonly class?: string
}) => (
  <ul class={props.class === undefined ? "issues" : `issues ${props.class}`} aria-label={props.name}>
    {props.issues.map((issue) => (
      <li key={issue}>{issue}</li>
    ))}
  </ul>
)
