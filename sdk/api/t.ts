/**
 * The TypeBox builders the contract uses, imported one by one (`import * as T from "./t.js"`): the
 * contract is bundled into the webviews, where TypeBox's `Type` object would bring all of its
 * builders (46 kB minified) and these take 8 kB.
 */
export { Array, Boolean, Integer, Literal, Null, Number, Object, Optional, Record, String, Union, Unknown, Unsafe } from "@sinclair/typebox/type";
