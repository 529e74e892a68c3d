import { useState } from "preact/hooks"
import { NewRfq } from "./NewRfq.js"
import { TakerRfq } from "./TakerRfq.js"
import { TakerRfqs } from "./TakerRfqs.js"

/** Taker: build and send on the left; watch, accept and see the fill on the right. */
export const TakerScreen = () => {
  const [selected, setSelected] = useState<number | undefined>(undefined)
  return (
    <div class="screen two-columns">
      <section class="panel">
        <NewRfq onSent={setSelected} />
      </section>
      <section class="panel">
        {selected !== undefined && <TakerRfq key={selected} rfqId={selected} />}
        <TakerRfqs selected={selected} onSelect={setSelected} />
      </section>
    </div>
  )
}
