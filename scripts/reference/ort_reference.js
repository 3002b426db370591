#!/usr/bin/env node
// troupe's reference runner: onnxruntime-node (CPU) on seeded inputs, for the tests' expected
// outputs and the main job's side-by-side benchmark. Installed by scripts/fetch_test_data.sh.
//
//   node ort_reference.js run   MODEL.onnx [--shape SHAPES] [--seed N] [--fill NAME=V,...] --out DIR
//       one inference with 1 intra-op thread; writes DIR/input_<name>.<type>,
//       DIR/output_<name>.<type> (raw little-endian, the tensor's own element type) and
//       DIR/meta.json (names, shapes, types, files, sha256, min/max/mean, runtime version).
//   node ort_reference.js bench MODEL.onnx [--shape SHAPES | --stream SHAPES;SHAPES;...] [--seconds S] [--runs N]
//       prints one JSON object: latency (median, p90, mean, min, max) with 1 and 2 intra-op
//       threads, and throughput of two worker threads each running a 1-thread session. With
//       --stream, inference i takes the shapes (and seeded input) of entry i mod n: a stream of
//       requests of varying shapes, as troupe bench's -data_shape configurations in turn.
//
// SHAPES: 1x3x48x192 (every input) or x:1x3x48x192,y:1x2 (per input name).
// Seeded input, the same as `troupe run` without -i: mulberry32(seed, default 12345), one draw
// per element, row-major, inputs in model order, value = (u32 >>> 8) / 2^24 (exact in float32,
// in [0,1)). Integer inputs take the draw's integer part (0), booleans false. --fill gives
// every element of the named inputs the value V instead (the draws are still made, so the
// other inputs stay as troupe run's): a sample rate, a mode flag. Two fills use the draw:
// NAME=ids:N gives floor(draw * N), token ids in [0, N); NAME=mask:P gives 0 where the draw is
// below P and 1 elsewhere, an attention mask with about a fraction P of zeros.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

const ort = require('./load_ort')('ort_reference');

function mulberry32(seed) {
  let a = seed | 0;
  return () => {
    a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/// onnxruntime-node type name -> [typed array, file suffix].
const types = {
  float32: [Float32Array, 'f32'], float64: [Float64Array, 'f64'], int8: [Int8Array, 'i8'],
  uint8: [Uint8Array, 'u8'], int16: [Int16Array, 'i16'], uint16: [Uint16Array, 'u16'],
  int32: [Int32Array, 'i32'], uint32: [Uint32Array, 'u32'], int64: [BigInt64Array, 'i64'],
  uint64: [BigUint64Array, 'u64'], bool: [Uint8Array, 'bool'],
};

function parseShapes(text, names) {
  const shapes = {};
  if (!text) return shapes;
  const parse = (s, what) => {
    const dims = s.split('x').map(Number);
    if (!dims.length || dims.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`bad shape '${s}' for ${what}`);
    return dims;
  };
  if (!text.includes(':')) {
    for (const n of names) shapes[n] = parse(text, `input ${n}`);
    return shapes;
  }
  for (const part of text.split(',')) {
    const [name, s] = part.split(':');
    if (!names.includes(name)) throw new Error(`--shape names '${name}', not an input of the model (inputs: ${names.join(', ')})`);
    shapes[name] = parse(s, `input ${name}`);
  }
  return shapes;
}

function parseFill(text, names) {
  const fill = {};
  if (!text) return fill;
  for (const part of text.split(',')) {
    const [name, v] = part.split('=');
    if (!names.includes(name)) throw new Error(`--fill names '${name}', not an input of the model (inputs: ${names.join(', ')})`);
    const drawn = /^(ids|mask):(.*)$/.exec(v || '');
    if (drawn) {
      const n = +drawn[2];
      if (!Number.isFinite(n) || (drawn[1] === 'ids' ? !(Number.isInteger(n) && n > 0) : n < 0 || n > 1))
        throw new Error(`--fill ${name}=${v}: ${drawn[1] === 'ids' ? 'ids:N takes a whole N > 0' : 'mask:P takes 0 <= P <= 1'}`);
      fill[name] = drawn[1] === 'ids' ? (d) => Math.floor(d * n) : (d) => (d < n ? 0 : 1);
      continue;
    }
    if (v === undefined || !Number.isFinite(+v)) throw new Error(`--fill ${name} needs a number, ids:N or mask:P, got '${v}'`);
    fill[name] = +v;
  }
  return fill;
}

function makeFeeds(session, opt) {
  const rnd = mulberry32(opt.seed);
  const shapes = parseShapes(opt.shape, session.inputNames);
  const fill = parseFill(opt.fill, session.inputNames);
  const feeds = {};
  for (const [i, name] of session.inputNames.entries()) {
    const md = session.inputMetadata[i];
    const shape = shapes[name] || md.shape;
    if (shape.some((d) => typeof d !== 'number' || d < 0))
      throw new Error(`input ${name} has the dynamic shape ${JSON.stringify(md.shape)}: pass --shape`);
    const type = md.type;
    if (!types[type]) throw new Error(`input ${name} has the element type ${type}, which this runner does not feed`);
    const [Array_, suffix] = types[type];
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Array_(n);
    for (let k = 0; k < n; k++) {
      const draw = (rnd() >>> 8) / 16777216;
      const v = !(name in fill) ? draw : typeof fill[name] === 'function' ? fill[name](draw) : fill[name];
      if (suffix === 'f32' || suffix === 'f64') data[k] = v;
      else if (Array_ === BigInt64Array || Array_ === BigUint64Array) data[k] = BigInt(Math.floor(v));
      else data[k] = Math.floor(v);
    }
    feeds[name] = new ort.Tensor(type, data, shape);
  }
  return feeds;
}

/// One set of feeds per --stream entry (or the one of --shape), used in turn.
function makeFeedList(session, opt) {
  if (!opt.stream) return [makeFeeds(session, opt)];
  return opt.stream.split(';').map((shape) => makeFeeds(session, { ...opt, shape }));
}

function sessionOptions(threads) {
  return { executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all' };
}

/// Raw little-endian bytes of a tensor in its own element type (x86 and Arm are little-endian).
function tensorBytes(t) {
  const d = t.data;
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

function save(dir, prefix, tensors) {
  return Object.entries(tensors).map(([name, t]) => {
    const suffix = types[t.type] ? types[t.type][1] : t.type;
    const file = `${prefix}_${name.replace(/[^A-Za-z0-9._-]/g, '_')}.${suffix}`;
    const bytes = tensorBytes(t);
    fs.writeFileSync(path.join(dir, file), bytes);
    let min = Infinity, max = -Infinity, sum = 0;
    for (const v of t.data) { const x = Number(v); if (x < min) min = x; if (x > max) max = x; sum += x; }
    return { name, file, shape: t.dims, element_type: t.type, elements: t.data.length,
      sha256: crypto.createHash('sha256').update(bytes).digest('hex'), min, max, mean: sum / t.data.length };
  });
}

async function run(model, opt) {
  const session = await ort.InferenceSession.create(model, sessionOptions(1));
  const feeds = makeFeeds(session, opt);
  const outputs = await session.run(feeds);
  fs.mkdirSync(opt.out, { recursive: true });
  const meta = {
    model: path.basename(model), model_sha256: crypto.createHash('sha256').update(fs.readFileSync(model)).digest('hex'),
    runtime: `onnxruntime-node ${ort.env.versions.common}`, execution_provider: 'cpu', intra_op_threads: 1,
    input_generator: `mulberry32(${opt.seed}) per element, row-major, inputs in model order; float value = (u32 >>> 8) / 2^24`
      + (opt.fill ? `; filled: ${opt.fill}` : ''),
    inputs: save(opt.out, 'input', feeds), outputs: save(opt.out, 'output', outputs),
  };
  fs.writeFileSync(path.join(opt.out, 'meta.json'), JSON.stringify(meta, null, 1) + '\n');
  await session.release();
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const n = s.length;
  const r = (x) => Math.round(x * 1000) / 1000;
  return { count: n, median_ms: r(n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2),
    p90_ms: r(s[Math.min(n - 1, Math.ceil(0.9 * n) - 1)]), mean_ms: r(s.reduce((a, b) => a + b, 0) / n),
    min_ms: r(s[0]), max_ms: r(s[n - 1]) };
}

/// Latency of one session: warm-up, then `runs` timed inferences or `seconds`, whichever ends later.
async function latency(model, opt, threads) {
  const session = await ort.InferenceSession.create(model, sessionOptions(threads));
  const feeds = makeFeedList(session, opt);
  for (let i = 0; i < 3; i++) await session.run(feeds[i % feeds.length]);
  const ms = [];
  const end = now() + opt.seconds * 1000;
  while (ms.length < opt.runs || now() < end) {
    const t = now();
    await session.run(feeds[ms.length % feeds.length]);
    ms.push(now() - t);
  }
  await session.release();
  return { threads, ...summary(ms) };
}

/// `k` worker threads, each a 1-thread session, started together; inferences per second of all.
async function throughput(model, opt, k) {
  const flags = new Int32Array(new SharedArrayBuffer(4 * 2));
  const done = [];
  for (let j = 0; j < k; j++) {
    const w = new Worker(__filename, { workerData: { model, opt, flags: flags.buffer } });
    done.push(new Promise((resolve, reject) => { w.on('message', resolve); w.on('error', reject); }));
  }
  while (Atomics.load(flags, 0) < k) await new Promise((r) => setTimeout(r, 5));
  Atomics.store(flags, 1, 1);
  Atomics.notify(flags, 1);
  const results = await Promise.all(done);
  const n = results.reduce((a, r) => a + r.count, 0);
  const seconds = Math.max(...results.map((r) => r.seconds));
  return { workers: k, threads_per_worker: 1, count: n, seconds: +seconds.toFixed(3), per_s: +(n / seconds).toFixed(3) };
}

async function worker() {
  const { model, opt } = workerData;
  const flags = new Int32Array(workerData.flags);
  const session = await ort.InferenceSession.create(model, sessionOptions(1));
  const feeds = makeFeedList(session, opt);
  for (let i = 0; i < 3; i++) await session.run(feeds[i % feeds.length]);
  Atomics.add(flags, 0, 1);
  while (Atomics.load(flags, 1) === 0) Atomics.wait(flags, 1, 0, 50);
  let count = 0;
  const t0 = now();
  const end = t0 + opt.seconds * 1000;
  while (now() < end) { await session.run(feeds[count % feeds.length]); count++; }
  await session.release();
  parentPort.postMessage({ count, seconds: (now() - t0) / 1000 });
}

async function bench(model, opt) {
  const result = { model: path.basename(model), shape: opt.shape || null, stream: opt.stream || null,
    runtime: `onnxruntime-node ${ort.env.versions.common}`, cpus: os.cpus().length,
    load_average_before: os.loadavg()[0], latency: [], throughput: null };
  result.latency.push(await latency(model, opt, 1));
  result.latency.push(await latency(model, opt, 2));
  result.throughput = await throughput(model, opt, 2);
  console.log(JSON.stringify(result));
}

function usage(message) {
  console.error(`ort_reference: ${message}\nusage: node ort_reference.js run MODEL.onnx [--shape SHAPES] [--seed N] [--fill NAME=V,...] --out DIR\n` +
    '       node ort_reference.js bench MODEL.onnx [--shape SHAPES | --stream SHAPES;SHAPES;...] [--seconds S] [--runs N]');
  process.exit(2);
}

async function main() {
  const [command, model, ...rest] = process.argv.slice(2);
  if (command !== 'run' && command !== 'bench') usage(`unknown command '${command || ''}'`);
  if (!model) usage('no model given');
  if (!fs.existsSync(model)) usage(`model file '${model}' not found`);
  const opt = { shape: null, stream: null, seed: 12345, out: null, seconds: 5, runs: 20, fill: null };
  const numeric = { '--seed': 'seed', '--seconds': 'seconds', '--runs': 'runs' };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    const value = rest[++i];
    if (value === undefined) usage(`${flag} needs a value`);
    if (flag === '--shape') opt.shape = value;
    else if (flag === '--stream') opt.stream = value;
    else if (flag === '--out') opt.out = value;
    else if (flag === '--fill') opt.fill = value;
    else if (numeric[flag]) {
      if (!Number.isFinite(+value) || +value < 0) usage(`${flag} takes a number >= 0, got '${value}'`);
      opt[numeric[flag]] = +value;
    } else usage(`unknown flag '${flag}'`);
  }
  if (command === 'run') {
    if (!opt.out) usage('run needs --out DIR');
    await run(path.resolve(model), opt);
  } else {
    await bench(path.resolve(model), opt);
  }
}

if (isMainThread) main().catch((e) => { console.error(`ort_reference: ${e.message || e}`); process.exit(1); });
else worker().catch((e) => { console.error(`ort_reference worker: ${e.message || e}`); process.exit(1); });
