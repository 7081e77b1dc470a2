// Greedy generation with transformers.js' browser build (dist/transformers.min.js, which bundles
// onnxruntime-web) in a real browser: chromium, headless, driven by puppeteer-core. Everything is
// served from a local HTTP server started here (the library, onnxruntime-web's wasm files and the
// packages); nothing is fetched from elsewhere.
//
//   node tests/ort/decoder_browser.mjs CHROMIUM IDS MAX_NEW_TOKENS PACKAGE_DIR...
//
// IDS: the prompt's token ids, comma-separated. Each package is loaded in a page of its own
// (transformers.js chains its model loads on one promise: after a failed load every later one in
// the page fails), single-threaded on the wasm backend. Prints one line per package: the whole
// sequence (prompt and generated ids) as a JSON array. Exits 1 with the browser's message on any
// error.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', '..', 'package.json'));
const [chromium, ids, maxNew, ...packages] = process.argv.slice(2);
if (!packages.length) {
  process.stderr.write('usage: decoder_browser.mjs CHROMIUM IDS MAX_NEW_TOKENS PACKAGE_DIR...\n');
  process.exit(2);
}

// The directory of package `name` as `req` resolves it (neither package exports its package.json).
function packageDir(req, name) {
  let dir = path.dirname(req.resolve(name));
  while (!fs.existsSync(path.join(dir, 'package.json')) ||
         JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name !== name)
    dir = path.dirname(dir);
  return dir;
}

// URL prefix -> directory: the browser build of transformers.js, the onnxruntime-web it was built
// with (its wasm files), and the packages as models "0", "1", ...
const transformersDir = packageDir(require, '@huggingface/transformers');
const ortDir = path.join(
  packageDir(createRequire(path.join(transformersDir, 'package.json')), 'onnxruntime-web'), 'dist');
const roots = { '/tjs/': path.join(transformersDir, 'dist'), '/ort/': ortDir };
packages.forEach((dir, i) => { roots[`/models/${i}/`] = path.resolve(dir); });
const types = { '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.html': 'text/html' };

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  if (url === '/') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>decoder_browser</title>');
    return;
  }
  for (const [prefix, dir] of Object.entries(roots)) {
    if (!url.startsWith(prefix)) continue;
    const file = path.resolve(dir, url.slice(prefix.length));
    if (!file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile())
      break;
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream',
      'content-length': fs.statSync(file).size });
    if (req.method === 'HEAD') res.end();
    else fs.createReadStream(file).pipe(res);
    return;
  }
  res.writeHead(404);
  res.end();
});

// In the page: load model `id` from the server and generate greedily.
async function generate(origin, id, prompt, maxNewTokens) {
  const { AutoModelForCausalLM, Tensor, env } = await import(`${origin}/tjs/transformers.min.js`);
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useBrowserCache = false;
  env.localModelPath = `${origin}/models/`;
  env.backends.onnx.wasm.wasmPaths = `${origin}/ort/`;
  env.backends.onnx.wasm.numThreads = 1;
  const model = await AutoModelForCausalLM.from_pretrained(id, { dtype: 'fp32', device: 'wasm' });
  const ids = BigInt64Array.from(prompt.map(BigInt));
  const input_ids = new Tensor('int64', ids, [1, ids.length]);
  const attention_mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n),
    [1, ids.length]);
  const out = await model.generate({ input_ids, attention_mask, max_new_tokens: maxNewTokens,
    do_sample: false });
  return out.tolist()[0].map(Number);
}

let browser;
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'decoder_browser-'));
try {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const { default: puppeteer } = await import(require.resolve('puppeteer-core'));
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const prompt = ids.split(',').map(Number);
  for (const [i] of packages.entries()) {
    const page = await browser.newPage();
    const log = [];
    page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log.push(`page error: ${e.message}`));
    await page.goto(`${origin}/`);
    try {
      const seq = await page.evaluate(generate, origin, String(i), prompt, Number(maxNew));
      process.stdout.write(JSON.stringify(seq) + '\n');
    } catch (e) {
      throw new Error(`${packages[i]}: ${e.message}\n${log.join('\n')}`);
    }
    await page.close();
  }
} catch (e) {
  process.stderr.write(`decoder_browser: ${e.stack ?? e}\n`);
  process.exitCode = 1;
} finally {
  await browser?.close();
  server.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
