/**
 * Deterministic generator of the svc-tiny pretraining corpus: short English chats built from the
 * hand-written facts in ./facts.ts. Same seed, same corpus, byte for byte; the pretrain script
 * writes it to models/corpus/ so the shipped model can be rebuilt and audited.
 *
 * Besides question/answer chats it mixes in copying and quoting tasks and answer lead-ins, so the
 * base model knows every printable character and can place an answer after a prefix: without
 * them a LoRA could not teach a new output format (such as the quickstart's JSON) in a minute.
 */
import type { ChatMessage } from "../../engine/tokenizer.js";
import { SeededRandom } from "../../engine/random.js";
import * as F from "./facts.js";

type Turn = [user: string, assistant: string];

const SYSTEM_PROMPTS = ["You are a helpful assistant.", "You are a friendly assistant. Answer briefly.", "Answer the question."];

function pick<T>(random: SeededRandom, items: readonly T[]): T {
  return items[random.int(items.length)];
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** One generator per kind of question; each returns a user message and the answer. */
const TURN_MAKERS: Array<(r: SeededRandom) => Turn> = [
  (r) => {
    const [country, city] = pick(r, F.CAPITALS);
    const q = pick(r, [
      `What is the capital of ${country}?`,
      `Which city is the capital of ${country}?`,
      `Tell me the capital of ${country}.`,
      `capital of ${country}?`,
    ]);
    return [q, `The capital of ${country} is ${city}.`];
  },
  (r) => {
    const [thing, color] = pick(r, F.COLORS);
    const q = pick(r, [`What color is ${thing}?`, `What colour is ${thing}?`, `Which color is ${thing}?`]);
    return [q, `${capitalize(thing)} is ${color}.`];
  },
  (r) => {
    const [animal, sound] = pick(r, F.SOUNDS);
    const q = pick(r, [`What does a ${animal} say?`, `What sound does a ${animal} make?`]);
    return [q, `A ${animal} says ${sound}.`];
  },
  (r) => {
    const [a, b] = pick(r, F.OPPOSITES);
    const [word, opposite] = r.next() < 0.5 ? [a, b] : [b, a];
    const q = pick(r, [`What is the opposite of ${word}?`, `Opposite of ${word}?`, `What is the opposite of the word ${word}?`]);
    return [q, `The opposite of ${word} is ${opposite}.`];
  },
  (r) => {
    const [one, many] = pick(r, F.PLURALS);
    return [pick(r, [`What is the plural of ${one}?`, `Plural of ${one}?`]), `The plural of ${one} is ${many}.`];
  },
  (r) => {
    const a = r.int(10);
    const b = r.int(10);
    if (r.next() < 0.6) return [pick(r, [`What is ${a} plus ${b}?`, `What is ${a} + ${b}?`]), `${a} plus ${b} is ${a + b}.`];
    const [big, small] = a >= b ? [a, b] : [b, a];
    return [pick(r, [`What is ${big} minus ${small}?`, `What is ${big} - ${small}?`]), `${big} minus ${small} is ${big - small}.`];
  },
  (r) => {
    const n = r.int(F.NUMBER_WORDS.length - 1);
    return [`What number comes after ${F.NUMBER_WORDS[n]}?`, `After ${F.NUMBER_WORDS[n]} comes ${F.NUMBER_WORDS[n + 1]}.`];
  },
  (r) => {
    const i = r.int(F.DAYS.length);
    return [pick(r, [`What day comes after ${F.DAYS[i]}?`, `What is the day after ${F.DAYS[i]}?`]), `The day after ${F.DAYS[i]} is ${F.DAYS[(i + 1) % 7]}.`];
  },
  (r) => {
    const i = r.int(F.MONTHS.length);
    return [`What month comes after ${F.MONTHS[i]}?`, `The month after ${F.MONTHS[i]} is ${F.MONTHS[(i + 1) % 12]}.`];
  },
  (r) => {
    const [topic, text] = pick(r, F.TOPICS);
    return [pick(r, [`Tell me about ${topic}.`, `What do you know about ${topic}?`, `Tell me something about ${topic}.`]), text];
  },
  (r) => {
    const word = pick(r, [...F.SOUNDS.map(([a]) => a), ...F.OPPOSITES.map(([a]) => a), "house", "apple", "green", "water", "happy"]);
    return [pick(r, [`How do you spell ${word}?`, `Spell ${word}.`]), `${capitalize(word)} is spelled ${word.split("").join("-")}.`];
  },
  (r) => {
    const animal = pick(r, F.STORY_ANIMALS);
    const story =
      `Once upon a time, a ${animal} lived in ${pick(r, F.STORY_PLACES)}. ` +
      `One day the ${animal} found ${pick(r, F.STORY_FINDS)}. ` +
      pick(r, F.STORY_ENDINGS).replaceAll("{a}", animal);
    return [pick(r, ["Tell me a short story.", `Tell me a story about a ${animal}.`, "Tell me a story."]), story];
  },
  (r) => [
    pick(r, ["Hi", "Hello", "Hello!", "Hey", "Hi there", "Good morning", "Good evening"]),
    pick(r, ["Hello! How can I help you today?", "Hi! What would you like to know?", "Hello! Ask me anything."]),
  ],
  (r) => [pick(r, ["Thank you!", "Thanks", "Thanks a lot."]), pick(r, ["You are welcome!", "Happy to help!"])],
  (r) => [pick(r, ["Bye", "Goodbye!", "See you later."]), pick(r, ["Goodbye! Have a nice day.", "Bye! Take care."])],
  (r) => [pick(r, ["How are you?", "How are you today?"]), pick(r, ["I am fine, thank you! How can I help?", "I am well, thanks for asking."])],
  (r) => [pick(r, ["Who are you?", "What is your name?"]), "I am svc-tiny, a very small language model."],
  (r) => {
    const [thing, color] = pick(r, F.COLORS);
    const other = pick(r, ["red", "blue", "green", "white", "black", "yellow"]);
    return other === color ? [`Is ${thing} ${other}?`, `Yes, ${thing} is ${color}.`] : [`Is ${thing} ${other}?`, `No, ${thing} is ${color}.`];
  },
];

/** A short string with punctuation, quotes, brackets and digits, for the copying tasks. */
function structuredSnippet(r: SeededRandom): string {
  const key = pick(r, ["name", "color", "city", "animal", "size", "day", "id", "count"]);
  const word = pick(r, [...F.CAPITALS.map(([, city]) => city), ...F.COLORS.map(([, c]) => c), ...F.SOUNDS.map(([a]) => a), ...F.DAYS]);
  const n = r.int(100);
  switch (r.int(7)) {
    case 0:
      return `{"${key}": "${word}"}`;
    case 1:
      return `{"${key}": ${n}}`;
    case 2:
      return `[${n}, ${r.int(10)}, ${r.int(10)}]`;
    case 3:
      return `"${word}"`;
    case 4:
      return `${key}: ${word}`;
    case 5:
      return `(${word}, ${n})`;
    default:
      return `${word} ${n} ${pick(r, ["+", "-", "=", "/", "#", "@", "&", "%", "*", "?", "!", ";"])} ${r.int(10)}`;
  }
}

/** Questions with a one-word answer, for the "answer in one word" task. */
function shortAnswerQuestion(r: SeededRandom): Turn {
  switch (r.int(5)) {
    case 0: {
      const [country, city] = pick(r, F.CAPITALS);
      return [`What is the capital of ${country}?`, city];
    }
    case 1: {
      const [thing, color] = pick(r, F.COLORS);
      return [`What color is ${thing}?`, color];
    }
    case 2: {
      const [animal, sound] = pick(r, F.SOUNDS);
      return [`What does a ${animal} say?`, sound];
    }
    case 3: {
      const [a, b] = pick(r, F.OPPOSITES);
      return [`What is the opposite of ${a}?`, b];
    }
    default: {
      const [one, many] = pick(r, F.PLURALS);
      return [`What is the plural of ${one}?`, many];
    }
  }
}

/**
 * Copying and formatting tasks: they teach the model every printable character (quotes,
 * braces, colons...) and to copy from the prompt, which fine-tunes into new formats need.
 */
const FORMAT_MAKERS: Array<(r: SeededRandom) => Turn> = [
  (r) => {
    const s = structuredSnippet(r);
    return [pick(r, [`Repeat after me: ${s}`, `Say this: ${s}`, `Copy this: ${s}`]), s];
  },
  (r) => {
    const w = pick(r, [...F.SOUNDS.map(([a]) => a), ...F.DAYS, ...F.MONTHS]);
    return [`Put the word ${w} in quotes.`, `"${w}"`];
  },
  (r) => {
    const [q, a] = shortAnswerQuestion(r);
    return [`Answer in one word. ${q}`, capitalize(a)];
  },
  (r) => {
    const [q, a] = pick(r, TURN_MAKERS)(r);
    return [`Answer in quotes. ${q}`, `"${a}"`];
  },
];

/**
 * Lead-ins put in front of some answers. They teach the model to find the answer in the question
 * even when it does not start right after <|assistant|>, which is what lets a small LoRA add a
 * prefix or a wrapper (the quickstart's JSON) without losing the content.
 */
const LEAD_INS = ["Sure! ", "OK. ", "Good question! ", "Let me think. ", "Here is the answer: ", "Easy! "];

/** One conversation: an optional system prompt and one to three question/answer turns. */
export function generateConversation(random: SeededRandom): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (random.next() < 0.2) messages.push({ role: "system", content: pick(random, SYSTEM_PROMPTS) });
  const turns = random.next() < 0.7 ? 1 : random.next() < 0.7 ? 2 : 3;
  for (let t = 0; t < turns; t++) {
    const maker = random.next() < 0.15 ? pick(random, FORMAT_MAKERS) : pick(random, TURN_MAKERS);
    const [user, assistant] = maker(random);
    const leadIn = random.next() < 0.2 ? pick(random, LEAD_INS) : "";
    messages.push({ role: "user", content: user }, { role: "assistant", content: leadIn + assistant });
  }
  return messages;
}

/** `count` conversations from `seed`, each fitting in `maxTokens` once rendered. */
export function generateCorpus(count: number, seed: number, maxTokens: number, renderLength: (m: ChatMessage[]) => number): ChatMessage[][] {
  const random = new SeededRandom(seed);
  const out: ChatMessage[][] = [];
  while (out.length < count) {
    const conversation = generateConversation(random);
    if (renderLength(conversation) <= maxTokens) out.push(conversation);
  }
  return out;
}
