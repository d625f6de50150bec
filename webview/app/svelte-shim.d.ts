/** Lets plain TypeScript entry points import .svelte components (svelte-check is not part of the build). */
declare module "*.svelte" {
  import type { Component } from "svelte";
  const component: Component<any>;
  export default component;
}
