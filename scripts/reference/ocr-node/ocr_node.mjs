// The reference OCR pipeline for scripts/ocr_bench.sh: @gutenye/ocr-node on the same images
// troupe_ocr reads. Prints JSON: [{"image": PATH, "ms": [per run], "lines": [text, ...]}].
//   node ocr_node.mjs latency RUNS IMAGE...   each image RUNS times in a row, one at a time
//   node ocr_node.mjs stream ROUNDS IMAGE...  every image ROUNDS times, all started at once
//                                             (as many in flight as the event loop takes); prints
//                                             {"images": N, "seconds": S} instead
import Ocr from '@gutenye/ocr-node'

const [mode, count, ...images] = process.argv.slice(2)
const n = Number(count)
if (!['latency', 'stream'].includes(mode) || !(n > 0) || images.length === 0) {
  console.error('usage: node ocr_node.mjs latency|stream COUNT IMAGE...')
  process.exit(2)
}
const ocr = await Ocr.create()
const now = () => Number(process.hrtime.bigint()) / 1e6

if (mode === 'latency') {
  const out = []
  for (const image of images) {
    const ms = []
    let lines = []
    for (let r = 0; r < n; ++r) {
      const t0 = now()
      lines = await ocr.detect(image)
      ms.push(now() - t0)
    }
    out.push({ image, ms, lines: lines.map((l) => l.text) })
  }
  console.log(JSON.stringify(out))
} else {
  const all = []
  for (let r = 0; r < n; ++r) all.push(...images)
  await ocr.detect(images[0]) // the sessions' first run out of the measurement
  const t0 = now()
  await Promise.all(all.map((image) => ocr.detect(image)))
  console.log(JSON.stringify({ images: all.length, seconds: (now() - t0) / 1000 }))
}
