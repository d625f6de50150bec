/**
 * Hand-written facts for the svc-tiny pretraining corpus. Written for this project and released
 * under CC0 (models/corpus/LICENSE); nothing here is copied from a copyrighted source.
 * Kept small and regular on purpose: a 0.5M-parameter byte model can learn these patterns in
 * minutes, which is what makes its chat replies readable.
 */
export const CAPITALS: Array<[string, string]> = [
  ['France', 'Paris'], ['Spain', 'Madrid'], ['Italy', 'Rome'], ['Germany', 'Berlin'], ['Japan', 'Tokyo'],
  ['China', 'Beijing'], ['Egypt', 'Cairo'], ['Kenya', 'Nairobi'], ['Peru', 'Lima'], ['Chile', 'Santiago'],
  ['Canada', 'Ottawa'], ['Mexico', 'Mexico City'], ['Brazil', 'Brasilia'], ['India', 'New Delhi'], ['Russia', 'Moscow'],
  ['Norway', 'Oslo'], ['Sweden', 'Stockholm'], ['Finland', 'Helsinki'], ['Greece', 'Athens'], ['Portugal', 'Lisbon'],
  ['Ireland', 'Dublin'], ['Poland', 'Warsaw'], ['Austria', 'Vienna'], ['Cuba', 'Havana'], ['Ghana', 'Accra'],
  ['Thailand', 'Bangkok'], ['Turkey', 'Ankara'], ['Argentina', 'Buenos Aires'], ['Australia', 'Canberra'], ['Vietnam', 'Hanoi'],
];

export const COLORS: Array<[string, string]> = [
  ['the sky', 'blue'], ['grass', 'green'], ['snow', 'white'], ['a banana', 'yellow'], ['coal', 'black'],
  ['a tomato', 'red'], ['an orange', 'orange'], ['a lemon', 'yellow'], ['the sea', 'blue'], ['milk', 'white'],
  ['a strawberry', 'red'], ['a leaf', 'green'], ['chocolate', 'brown'], ['the sun', 'yellow'], ['a crow', 'black'],
  ['a carrot', 'orange'], ['an elephant', 'gray'], ['a frog', 'green'], ['a cherry', 'red'], ['a cloud', 'white'],
  ['a plum', 'purple'], ['a pumpkin', 'orange'], ['a pea', 'green'], ['a flamingo', 'pink'],
];

export const SOUNDS: Array<[string, string]> = [
  ['cow', 'moo'], ['dog', 'woof'], ['cat', 'meow'], ['duck', 'quack'], ['sheep', 'baa'], ['horse', 'neigh'],
  ['owl', 'hoot'], ['lion', 'roar'], ['pig', 'oink'], ['frog', 'ribbit'], ['bee', 'buzz'], ['snake', 'hiss'],
  ['mouse', 'squeak'], ['goat', 'baa'], ['wolf', 'howl'], ['chick', 'cheep'], ['crow', 'caw'], ['donkey', 'hee-haw'],
];

export const OPPOSITES: Array<[string, string]> = [
  ['hot', 'cold'], ['big', 'small'], ['fast', 'slow'], ['up', 'down'], ['day', 'night'], ['happy', 'sad'],
  ['old', 'new'], ['light', 'dark'], ['open', 'closed'], ['full', 'empty'], ['wet', 'dry'], ['hard', 'soft'],
  ['early', 'late'], ['high', 'low'], ['long', 'short'], ['loud', 'quiet'], ['near', 'far'], ['rich', 'poor'],
  ['strong', 'weak'], ['thick', 'thin'], ['young', 'old'], ['in', 'out'], ['left', 'right'], ['yes', 'no'],
];

export const PLURALS: Array<[string, string]> = [
  ['mouse', 'mice'], ['child', 'children'], ['foot', 'feet'], ['tooth', 'teeth'], ['man', 'men'], ['woman', 'women'],
  ['goose', 'geese'], ['box', 'boxes'], ['cat', 'cats'], ['dog', 'dogs'], ['city', 'cities'], ['leaf', 'leaves'],
  ['knife', 'knives'], ['bus', 'buses'], ['baby', 'babies'], ['fish', 'fish'], ['sheep', 'sheep'], ['book', 'books'],
];

export const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];

/** Short descriptions for "Tell me about X" / "What is X?" questions. */
export const TOPICS: Array<[string, string]> = [
  ['cats', 'Cats are small animals with soft fur. They like to sleep and play.'],
  ['dogs', 'Dogs are friendly animals. They like to run, play and go for walks.'],
  ['the sun', 'The sun is a star. It gives us light and keeps the earth warm.'],
  ['the moon', 'The moon goes around the earth. We see it at night.'],
  ['rain', 'Rain is water that falls from clouds. Plants need rain to grow.'],
  ['trees', 'Trees are tall plants with leaves and roots. They give us shade.'],
  ['the sea', 'The sea is a large body of salt water. Many fish live in it.'],
  ['bread', 'Bread is a food made from flour, water and yeast.'],
  ['music', 'Music is sound made with voices or instruments. Many people like to sing.'],
  ['books', 'Books have pages with words. People read books to learn and to have fun.'],
  ['birds', 'Birds have wings and feathers. Most birds can fly.'],
  ['bees', 'Bees are small insects. They make honey and help flowers grow.'],
  ['water', 'Water is a clear liquid. All living things need water.'],
  ['snow', 'Snow is frozen water that falls from the sky when it is cold.'],
  ['the earth', 'The earth is the planet we live on. It goes around the sun.'],
  ['computers', 'Computers are machines that follow instructions. They help us work and learn.'],
  ['apples', 'Apples are round fruits. They can be red, green or yellow.'],
  ['horses', 'Horses are large animals. People ride horses and they can run fast.'],
  ['winter', 'Winter is the coldest season of the year. It often snows.'],
  ['summer', 'Summer is the warmest season of the year. The days are long.'],
  ['friends', 'Friends are people who like each other and help each other.'],
  ['school', 'School is a place where children go to learn.'],
  ['the wind', 'The wind is moving air. It can be gentle or very strong.'],
  ['fire', 'Fire is hot and bright. It can cook food but it can also burn.'],
];

export const STORY_ANIMALS = ['fox', 'rabbit', 'bear', 'cat', 'dog', 'owl', 'mouse', 'duck', 'frog', 'lion'];
export const STORY_PLACES = ['a quiet forest', 'a small village', 'a green valley', 'a big city', 'a sunny farm', 'a little house'];
export const STORY_FINDS = ['a shiny stone', 'a red ball', 'a lost key', 'a tiny bird', 'a basket of apples', 'an old map'];
export const STORY_ENDINGS = [
  'The {a} was very happy.',
  'The {a} shared it with a friend.',
  'Then the {a} went home and slept.',
  'From that day on, the {a} was never lonely.',
];
