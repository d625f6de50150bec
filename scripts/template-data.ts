/**
 * Writes the datasets of the `svc init --template` starter projects (templates/<name>/data/*.jsonl).
 * Deterministic: the same seed gives the same files, so `npx tsx scripts/template-data.ts` after an
 * edit shows its effect as a plain diff. Every conversation fits svc-tiny's 160-token context
 * (one token per byte) with room to spare, and eval pairs are combinations the train split never
 * shows, so a falling eval loss means the pattern was learned, not the lines.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SeededRandom } from "../engine/random.js";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

type Pair = [user: string, assistant: string];

const pick = <T>(random: SeededRandom, items: readonly T[]): T => items[random.int(items.length)];

/** json-extraction: a sentence about a person in, a JSON object of its facts out. */
function jsonExtraction(random: SeededRandom): Pair[] {
  const names = [
    "Anna",
    "Ben",
    "Carla",
    "David",
    "Emma",
    "Felix",
    "Grace",
    "Hugo",
    "Iris",
    "Jonas",
    "Kate",
    "Leo",
    "Mia",
    "Noah",
    "Olga",
    "Paul",
    "Rosa",
    "Sam",
    "Tina",
    "Omar",
  ];
  const cities = ["Oslo", "Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Dublin", "Prague", "Athens", "Tokyo", "Lima"];
  const jobs = ["teacher", "baker", "nurse", "pilot", "farmer", "doctor", "painter", "driver", "cook", "writer"];
  const shapes: ((n: string, a: number, c: string, j: string) => string)[] = [
    (n, a, c, j) => `${n} is ${a} years old, works as a ${j} and lives in ${c}.`,
    (n, a, c, j) => `${n}, a ${j} from ${c}, is ${a}.`,
    (n, a, c, j) => `Meet ${n}: ${a}, ${j}, based in ${c}.`,
    (n, a, c, j) => `In ${c} lives ${n}, who is ${a} and a ${j}.`,
  ];
  const pairs: Pair[] = [];
  for (let i = 0; i < 200; i++) {
    const [n, a, c, j] = [pick(random, names), 18 + random.int(60), pick(random, cities), pick(random, jobs)];
    const user = `Extract as JSON: ${pick(random, shapes)(n, a, c, j)}`;
    pairs.push([user, JSON.stringify({ name: n, age: a, city: c, job: j })]);
  }
  return pairs;
}

/** classification: a short review in, one label out (positive, negative or neutral). */
function classification(random: SeededRandom): Pair[] {
  const things = ["soup", "film", "hotel", "phone", "book", "bike", "coffee", "game", "shoes", "lamp", "pizza", "train ride", "song", "chair"];
  const positive = [
    "I love this {t}.",
    "The {t} was great!",
    "What a wonderful {t}.",
    "Best {t} I ever had.",
    "The {t} is really good.",
    "This {t} made me happy.",
  ];
  const negative = [
    "I hate this {t}.",
    "The {t} was awful.",
    "What a terrible {t}.",
    "Worst {t} I ever had.",
    "The {t} is really bad.",
    "This {t} made me sad.",
  ];
  const neutral = [
    "I bought a {t} today.",
    "The {t} arrived on Monday.",
    "This {t} is blue.",
    "My {t} is in the kitchen.",
    "The {t} costs ten euros.",
    "I saw a {t} yesterday.",
  ];
  const pairs: Pair[] = [];
  for (let i = 0; i < 600; i++) {
    const label = (["positive", "negative", "neutral"] as const)[i % 3];
    const shapes = label === "positive" ? positive : label === "negative" ? negative : neutral;
    pairs.push([`Classify the sentiment as positive, negative or neutral: ${pick(random, shapes).replace("{t}", pick(random, things))}`, label]);
  }
  return pairs;
}

/** translation: "<count> <colour> <animal>" in English in, the French noun phrase out (masculine nouns, so no gender agreement). */
function translation(random: SeededRandom): Pair[] {
  // [English singular, English plural, French singular, French plural]
  const animals = [
    ["cat", "cats", "chat", "chats"],
    ["dog", "dogs", "chien", "chiens"],
    ["horse", "horses", "cheval", "chevaux"],
    ["bird", "birds", "oiseau", "oiseaux"],
    ["fish", "fish", "poisson", "poissons"],
    ["wolf", "wolves", "loup", "loups"],
    ["lion", "lions", "lion", "lions"],
    ["rabbit", "rabbits", "lapin", "lapins"],
    ["bear", "bears", "ours", "ours"],
  ] as const;
  // [English, French singular, French plural]
  const colours = [
    ["red", "rouge", "rouges"],
    ["blue", "bleu", "bleus"],
    ["green", "vert", "verts"],
    ["black", "noir", "noirs"],
    ["white", "blanc", "blancs"],
    ["yellow", "jaune", "jaunes"],
    ["grey", "gris", "gris"],
    ["brown", "brun", "bruns"],
  ] as const;
  const counts = [
    ["one", "un"],
    ["two", "deux"],
    ["three", "trois"],
    ["four", "quatre"],
  ] as const;
  const pairs: Pair[] = [];
  for (let i = 0; i < 400; i++) {
    const [animal, animals_, animal_fr, animals_fr] = pick(random, animals);
    const [colour, colour_fr, colours_fr] = pick(random, colours);
    const [count, count_fr] = pick(random, counts);
    const one = count === "one";
    pairs.push([
      `Translate to French: ${count} ${colour} ${one ? animal : animals_}`,
      `${count_fr} ${one ? animal_fr : animals_fr} ${one ? colour_fr : colours_fr}`,
    ]);
  }
  return pairs;
}

/** Train gets the first distinct pairs, eval the next ones whose user text train never saw. */
function split(pairs: Pair[], trainSize: number, evalSize: number): { train: Pair[]; eval: Pair[] } {
  const seen = new Set<string>();
  const unique = pairs.filter(([user]) => !seen.has(user) && seen.add(user));
  if (unique.length < trainSize + evalSize) throw new Error(`only ${unique.length} distinct examples, need ${trainSize + evalSize}`);
  return { train: unique.slice(0, trainSize), eval: unique.slice(trainSize, trainSize + evalSize) };
}

const jsonl = (pairs: Pair[]) =>
  pairs
    .map(([user, assistant]) =>
      JSON.stringify({
        messages: [
          { role: "user", content: user },
          { role: "assistant", content: assistant },
        ],
      }),
    )
    .join("\n") + "\n";

const TEMPLATES: Record<string, { make: (random: SeededRandom) => Pair[]; train: number; eval: number }> = {
  "json-extraction": { make: jsonExtraction, train: 120, eval: 20 },
  classification: { make: classification, train: 120, eval: 24 },
  translation: { make: translation, train: 110, eval: 20 },
};

for (const [name, spec] of Object.entries(TEMPLATES)) {
  const { train, eval: evalSet } = split(spec.make(new SeededRandom(12)), spec.train, spec.eval);
  const dir = path.join(root, "templates", name, "data");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "train.jsonl"), jsonl(train));
  writeFileSync(path.join(dir, "eval.jsonl"), jsonl(evalSet));
  const longest = Math.max(...[...train, ...evalSet].map(([u, a]) => Buffer.byteLength(u) + Buffer.byteLength(a) + 5));
  console.log(`${name}: ${train.length} train, ${evalSet.length} eval, longest ${longest} tokens`);
}
