/**
 * Settings for every process the test suite starts (mocha loads this first; children inherit it).
 * SVC_LLAMA_PRELOAD=0: most test clouds never chat, and loading llama.cpp in each of their inference
 * children costs the shared cores seconds each; tests of the preload set it back to 1.
 */
process.env.SVC_LLAMA_PRELOAD ??= "0";
