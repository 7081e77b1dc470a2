// Greedy decoding of a gguftool decoder package in onnxruntime-node, through the KV cache.
import ort from 'onnxruntime-node';
import fs from 'node:fs';
const [dir, prompt] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(`${dir}/config.json`));
const session = await ort.InferenceSession.create(`${dir}/onnx/model.onnx`);
const i64 = (a) => new ort.Tensor('int64', BigInt64Array.from(a.map(BigInt)), [1, a.length]);
let ids = prompt.split(',').map(Number), tokens = [...ids], past = {};
for (let i = 0; i < config.num_hidden_layers; ++i)
  for (const kv of ['key', 'value'])
    past[`past_key_values.${i}.${kv}`] = new ort.Tensor('float32', new Float32Array(0),
      [1, config.num_key_value_heads, 0, config.head_dim]);
for (let step = 0; step < 6; ++step) {
  const n = tokens.length - ids.length;
  const out = await session.run({ ...past, input_ids: i64(ids),
    attention_mask: i64(Array(tokens.length).fill(1)),
    position_ids: i64(ids.map((_, j) => n + j)) });
  const V = config.vocab_size, last = out.logits.data.subarray((ids.length - 1) * V, ids.length * V);
  const next = last.indexOf(Math.max(...last));
  for (const [name, t] of Object.entries(out))
    if (name.startsWith('present.')) past['past_key_values.' + name.slice(8)] = t;
  tokens.push(next); ids = [next];
}
console.log(tokens.join(' '));
