#!/usr/bin/env node
// ort_bench.js MODEL.onnx INPUT.npz [--runs N] [--reference REF.npz]
// [--save OUT.npz]: ONNX
// Runtime on the CPU, one thread, as the CPU peer of tools/bench.py. Loads the
// model with intraOpNumThreads and interOpNumThreads 1, feeds the npz's arrays
// by name (np.savez files, stored or deflated, zip64 or not), runs once to
// warm up, then times N runs (default 10) and prints one JSON object:
// median_ms, min_ms, runs, load_ms, the graph optimization level used, the
// onnxruntime-node version, the outputs' shapes and, with --reference, each
// output's cosine similarity to the reference array of its name; --save
// writes ONNX Runtime's outputs as an npz (stored, f32 and integer arrays). Needs
// onnxruntime-node on node's module path: tools/dev bench installs it into
// BUILD/ort and bench.py runs this with NODE_PATH=BUILD/ort/node_modules.
// Exit status 1 with the reason on stderr when anything fails.
'use strict';
const fs = require('fs');
const zlib = require('zlib');

function fail(msg) {
  process.stderr.write(`ort_bench: ${msg}\n`);
  process.exit(1);
}

// The members of a zip file as {name: Buffer}, from its central directory.
function readZip(buf) {
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65535); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) throw new Error('not a zip file (no end of central directory)');
  let count = buf.readUInt16LE(eocd + 10);
  let cd = buf.readUInt32LE(eocd + 16);
  if (cd === 0xffffffff || count === 0xffff) {  // zip64 end of central directory
    const loc = eocd - 20;
    if (loc < 0 || buf.readUInt32LE(loc) !== 0x07064b50) throw new Error('bad zip64 locator');
    const e64 = Number(buf.readBigUInt64LE(loc + 8));
    count = Number(buf.readBigUInt64LE(e64 + 32));
    cd = Number(buf.readBigUInt64LE(e64 + 48));
  }
  const members = {};
  let p = cd;
  for (let k = 0; k < count; k++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central directory entry');
    const method = buf.readUInt16LE(p + 10);
    let csize = buf.readUInt32LE(p + 20);
    let usize = buf.readUInt32LE(p + 24);
    const nlen = buf.readUInt16LE(p + 28), xlen = buf.readUInt16LE(p + 30);
    const clen = buf.readUInt16LE(p + 32);
    let off = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nlen);
    // zip64 extra field: the 64-bit values of the fields that hold 0xffffffff, in order.
    for (let x = p + 46 + nlen; x + 4 <= p + 46 + nlen + xlen;) {
      const id = buf.readUInt16LE(x), size = buf.readUInt16LE(x + 2);
      if (id === 0x0001) {
        let q = x + 4;
        if (usize === 0xffffffff) { usize = Number(buf.readBigUInt64LE(q)); q += 8; }
        if (csize === 0xffffffff) { csize = Number(buf.readBigUInt64LE(q)); q += 8; }
        if (off === 0xffffffff) { off = Number(buf.readBigUInt64LE(q)); q += 8; }
      }
      x += 4 + size;
    }
    if (buf.readUInt32LE(off) !== 0x04034b50) throw new Error(`bad local header for ${name}`);
    const data = off + 30 + buf.readUInt16LE(off + 26) + buf.readUInt16LE(off + 28);
    const raw = buf.subarray(data, data + csize);
    if (method === 0) members[name] = raw;
    else if (method === 8) members[name] = zlib.inflateRawSync(raw);
    else throw new Error(`${name}: zip compression method ${method} not supported`);
    if (members[name].length !== usize) throw new Error(`${name}: size mismatch`);
    p += 46 + nlen + xlen + clen;
  }
  return members;
}

// numpy dtype (descr) -> ONNX Runtime tensor type and typed array.
const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<f2': ['float16', Uint16Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array], '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
};

// One .npy member -> {type, data, dims}.
function parseNpy(name, b) {
  if (b.length < 10 || b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${name}: not a .npy array`);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = b.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape) throw new Error(`${name}: bad .npy header ${header.trim()}`);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${name}: Fortran order not supported`);
  const dt = DTYPES[descr[1]];
  if (!dt) throw new Error(`${name}: dtype ${descr[1]} not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const n = dims.reduce((a, d) => a * d, 1);
  const bytes = b.subarray(hstart + hlen);
  if (bytes.length !== n * dt[1].BYTES_PER_ELEMENT) throw new Error(`${name}: ${bytes.length} data bytes for shape [${dims}]`);
  const copy = new Uint8Array(bytes.length);  // aligned for the typed array
  copy.set(bytes);
  return { type: dt[0], data: new dt[1](copy.buffer), dims };
}

// {name: {type, data, dims}} of every array in an npz file; exits on errors.
function readNpz(path) {
  const arrays = {};
  try {
    for (const [member, bytes] of Object.entries(readZip(fs.readFileSync(path)))) {
      arrays[member.replace(/\.npy$/, '')] = parseNpy(member, bytes);
    }
  } catch (e) {
    fail(`${path}: ${e.message}`);
  }
  return arrays;
}

// numpy descr of each typed array --save writes.
const DESCRS = new Map([[Float32Array, '<f4'], [Float64Array, '<f8'], [Int32Array, '<i4'],
  [BigInt64Array, '<i8'], [Int8Array, '|i1'], [Uint8Array, '|u1'], [Int16Array, '<i2']]);

function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

// Writes {name: ort.Tensor} as an uncompressed npz (numpy's np.savez form).
function writeNpz(path, tensors) {
  const locals = [], centrals = [];
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    const descr = DESCRS.get(t.data.constructor);
    if (!descr) fail(`--save: output ${name} has a dtype npz writing does not know (${t.type})`);
    const dims = t.dims.length === 1 ? `${t.dims[0]},` : t.dims.join(', ');
    let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
    header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
    const npy = Buffer.concat([Buffer.from('\x93NUMPY\x01\x00', 'latin1'),
      Buffer.from([header.length & 0xff, header.length >> 8]), Buffer.from(header, 'latin1'),
      Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)]);
    const fname = Buffer.from(`${name}.npy`);
    const entry = Buffer.alloc(26);  // the fields a local and a central header share
    entry.writeUInt16LE(20, 0); entry.writeUInt32LE(crc32(npy), 10);
    entry.writeUInt32LE(npy.length, 14); entry.writeUInt32LE(npy.length, 18);
    entry.writeUInt16LE(fname.length, 22);
    const local = Buffer.concat([Buffer.from([0x50, 0x4b, 3, 4]), entry, fname, npy]);
    const tail = Buffer.alloc(14);  // comment length, disk, attributes, offset
    tail.writeUInt32LE(offset, 10);
    centrals.push(Buffer.concat([Buffer.from([0x50, 0x4b, 1, 2, 20, 0]), entry, tail, fname]));
    locals.push(local);
    offset += local.length;
  }
  const central = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length, 8); end.writeUInt16LE(centrals.length, 10);
  end.writeUInt32LE(central.length, 12); end.writeUInt32LE(offset, 16);
  fs.writeFileSync(path, Buffer.concat([...locals, central, end]));
}

function cosine(a, b) {
  if (a.length !== b.length) return null;
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    ab += x * y; aa += x * x; bb += y * y;
  }
  return aa === 0 && bb === 0 ? 1 : ab / Math.sqrt(aa * bb);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const args = process.argv.slice(2);
  let runs = 10;
  let reference = '', save = '';
  const pos = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--runs') runs = Number(args[++i]);
    else if (args[i] === '--reference') reference = args[++i];
    else if (args[i] === '--save') save = args[++i];
    else pos.push(args[i]);
  }
  if (pos.length !== 2 || !(runs >= 1)) fail('usage: ort_bench.js MODEL.onnx INPUT.npz [--runs N] [--reference REF.npz] [--save OUT.npz]');
  const [modelPath, inputPath] = pos;

  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    fail(`cannot load onnxruntime-node (NODE_PATH=${process.env.NODE_PATH || ''}): ${e.message.split('\n')[0]}`);
  }
  let version = '';
  try {
    version = require('onnxruntime-node/package.json').version;
  } catch (e) { /* not exported by every version */ }

  let feeds = {};
  for (const [name, a] of Object.entries(readNpz(inputPath))) feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
  const refs = reference ? readNpz(reference) : {};

  // Full graph optimization, or basic if that fails to load the model (ORT's
  // QDQ fusion rejects per-channel scales on some ops: tests/models/qdq_net.py).
  const t0 = process.hrtime.bigint();
  let session, optimization, firstError;
  for (optimization of ['all', 'basic']) {
    try {
      session = await ort.InferenceSession.create(modelPath, {
        executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: optimization,
      });
      break;
    } catch (e) {
      firstError = firstError || e.message;
    }
  }
  if (!session) fail(`${modelPath}: ${firstError}`);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) fail(`${inputPath} lacks the model inputs ${missing.join(', ')}`);
  feeds = Object.fromEntries(session.inputNames.map((n) => [n, feeds[n]]));

  const outputs = await session.run(feeds);  // warm-up
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const shapes = Object.fromEntries(Object.entries(outputs).map(([n, t]) => [n, t.dims]));
  const result = {
    model: modelPath, onnxruntime_node: version, threads: 1, runs, optimization,
    median_ms: median(times), min_ms: Math.min(...times), load_ms: loadMs, outputs: shapes,
  };
  if (reference) {
    result.cosine = {};
    for (const [n, t] of Object.entries(outputs)) {
      if (n in refs) result.cosine[n] = cosine(t.data, refs[n].data);
    }
  }
  if (save) writeNpz(save, outputs);
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => fail(e.stack || String(e)));
