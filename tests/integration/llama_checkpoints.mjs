// Checkpoints of one generation, saved by real llama.cpp (node-llama-cpp's prebuilt CPU
// build, as llama_state.mjs), for `statezip pack` (tests/integration/llama_pack.sh, bench/sets.sh).
//
//   node llama_checkpoints.mjs save MODEL DIR COUNT STEP   evaluate a STEP-token prompt, then
//        generate greedily; after the prompt and after every further STEP tokens, write the
//        sequence state (llama_state_seq_save_file) to DIR/ckpt-NN.bin: COUNT files, each a
//        prefix of the next
//   node llama_checkpoints.mjs compare MODEL A1 B1 A2 B2 ...   for each pair, load A and B in
//        fresh contexts, feed the last token of A's token list to both and require the same token
//        count and bit-identical probabilities for NLS_GEN greedy steps. Exit 0 only if all match.
//
// Env: NLS_KV_TYPE (default F16), NLS_FLASH_ATTN (0|1), NLS_CTX (default 2048), NLS_GEN (default 16).
import fs from "node:fs";
import crypto from "node:crypto";
import {getLlama, LlamaLogLevel} from "node-llama-cpp";

const KV_TYPE = process.env.NLS_KV_TYPE ?? "F16";
const FLASH_ATTN = (process.env.NLS_FLASH_ATTN ?? "0") === "1";
const CTX = Number(process.env.NLS_CTX ?? 2048);
const N_GEN = Number(process.env.NLS_GEN ?? 16);
const PROMPT = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. ";

async function sequenceOf(model) {
    const context = await model.createContext({
        contextSize: CTX, sequences: 1, batchSize: 512, threads: 1, flashAttention: FLASH_ATTN,
        experimentalKvCacheKeyType: KV_TYPE, experimentalKvCacheValueType: KV_TYPE});
    return {context, sequence: context.getSequence()};
}

async function probe(model, sequence, token) {
    const nVocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    const h = crypto.createHash("sha256");
    for (let i = 0; i < N_GEN; i++) {
        const [res] = await sequence.controlledEvaluate([[token, {generateNext: {token: true, probabilities: true}}]]);
        const probs = new Float32Array(nVocab).fill(-1);
        for (const [id, p] of res.next.probabilities) probs[id] = p;
        h.update(Buffer.from(probs.buffer));
        token = res.next.token;
    }
    return h.digest("hex");
}

async function save(model, dir, count, step) {
    fs.mkdirSync(dir, {recursive: true});
    const {context, sequence} = await sequenceOf(model);
    let toks = [];
    for (let text = PROMPT; toks.length < step + 1; text += PROMPT) {
        toks = model.tokenize(text);
        if (model.tokens.bos != null) toks = [model.tokens.bos, ...toks];
    }
    await sequence.evaluateWithoutGeneratingNewTokens(toks.slice(0, step));
    let token = toks[step];
    for (let k = 0; k < count; k++) {
        if (k) {
            for (let i = 0; i < step; i++) {  // greedy generation, one token at a time
                const [res] = await sequence.controlledEvaluate([[token, {generateNext: {token: true}}]]);
                token = res.next.token;
            }
        }
        const path = `${dir}/ckpt-${String(k + 1).padStart(2, "0")}.bin`;
        await sequence.saveStateToFile(path);
        console.log(JSON.stringify({saved: path, tokens: sequence.contextTokens.length, bytes: fs.statSync(path).size}));
    }
    await context.dispose();
}

async function fingerprint(model, path, token) {
    const {context, sequence} = await sequenceOf(model);
    await sequence.loadStateFromFile(path, {acceptRisk: true});
    const toks = sequence.contextTokens;
    const probs = await probe(model, sequence, token ?? (toks.length ? toks.at(-1) : 1));
    await context.dispose();
    return {tokens: toks.length, last: toks.at(-1), probs};
}

const [mode, modelPath, ...rest] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", skipDownload: true, usePrebuiltBinaries: true,
                              logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
let failed = false;
if (mode === "save") {
    await save(model, rest[0], Number(rest[1]), Number(rest[2]));
} else if (mode === "compare" && rest.length % 2 === 0 && rest.length > 0) {
    for (let i = 0; i < rest.length; i += 2) {
        const a = await fingerprint(model, rest[i]);
        const b = await fingerprint(model, rest[i + 1], a.last);
        const same = a.tokens === b.tokens && a.probs === b.probs;
        console.log(JSON.stringify({a: rest[i], b: rest[i + 1], tokens: a.tokens, identical: same}));
        failed ||= !same;
    }
} else {
    console.error("usage: node llama_checkpoints.mjs save MODEL DIR COUNT STEP | compare MODEL A1 B1 [A2 B2 ...]");
    failed = true;
}
await model.dispose();
await llama.dispose();
process.exitCode = failed ? 1 : 0;
