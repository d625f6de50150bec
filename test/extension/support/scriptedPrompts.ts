/**
 * STUB of VS Code's input boxes, quick picks and message dialogs — the one thing an extension test
 * cannot drive otherwise. Each test scripts the answers it expects to be asked for, in order, and
 * reads back every message the commands showed. Everything else (studio, cloud, training) is real.
 */
import type * as vscode from "vscode";
import type { Prompts } from "../../../extension/ui/prompts.js";

export interface ShownMessage {
  level: "info" | "warning" | "error";
  message: string;
  detail?: string;
  modal: boolean;
  actions: string[];
}

type InputAnswer = string | undefined;
type PickAnswer = (items: readonly vscode.QuickPickItem[]) => vscode.QuickPickItem | undefined;
type PickManyAnswer = (items: readonly vscode.QuickPickItem[]) => vscode.QuickPickItem[] | undefined;
type SaveAnswer = (options: vscode.SaveDialogOptions) => vscode.Uri | undefined;

export class ScriptedPrompts implements Prompts {
  readonly shown: ShownMessage[] = [];
  /** What validateInput said about each scripted input that it rejected. */
  readonly validationMessages: string[] = [];
  private readonly inputs: InputAnswer[] = [];
  private readonly picks: PickAnswer[] = [];
  private readonly messageAnswers: (string | undefined)[] = [];
  private readonly manyPicks: PickManyAnswer[] = [];
  private readonly saves: SaveAnswer[] = [];
  /** Options of every save dialog shown (its title and suggested file). */
  readonly saveDialogs: vscode.SaveDialogOptions[] = [];

  /** Next input box answers (undefined = Escape). */
  answerInputs(...answers: InputAnswer[]): this {
    this.inputs.push(...answers);
    return this;
  }
  /** Next quick pick answers, chosen by a function of the offered items. */
  answerPicks(...answers: PickAnswer[]): this {
    this.picks.push(...answers);
    return this;
  }
  /** Next multi-select quick pick answers, chosen by a function of the offered items. */
  answerPickMany(...answers: PickManyAnswer[]): this {
    this.manyPicks.push(...answers);
    return this;
  }
  /** Next save dialog answers (the file chosen, or undefined = dismissed), from the dialog's options. */
  answerSaves(...answers: SaveAnswer[]): this {
    this.saves.push(...answers);
    return this;
  }
  /** Next answers to modal messages, the ones that ask (the button label, or undefined = dismissed). */
  answerMessages(...answers: (string | undefined)[]): this {
    this.messageAnswers.push(...answers);
    return this;
  }

  errors(): string[] {
    return this.shown.filter((m) => m.level === "error").map((m) => m.message);
  }

  /** Like a real input box: an answer validateInput rejects is not accepted, the next one is tried. */
  async inputBox(options: vscode.InputBoxOptions): Promise<string | undefined> {
    for (;;) {
      if (this.inputs.length === 0) throw new Error(`unexpected input box: ${options.title ?? options.prompt}`);
      const answer = this.inputs.shift();
      if (answer === undefined) return undefined;
      const problem = await options.validateInput?.(answer);
      const text = typeof problem === "string" ? problem : problem?.message;
      if (!text) return answer;
      this.validationMessages.push(text);
    }
  }

  async quickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Promise<T | undefined> {
    const answer = this.picks.shift();
    if (!answer) throw new Error(`unexpected quick pick: ${options.title} (${items.map((i) => i.label).join(", ")})`);
    return answer(items) as T | undefined;
  }

  async quickPickMany<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Promise<T[] | undefined> {
    const answer = this.manyPicks.shift();
    if (!answer) throw new Error(`unexpected multi-select quick pick: ${options.title} (${items.map((i) => i.label).join(", ")})`);
    return answer(items) as T[] | undefined;
  }

  async saveDialog(options: vscode.SaveDialogOptions): Promise<vscode.Uri | undefined> {
    this.saveDialogs.push(options);
    const answer = this.saves.shift();
    if (!answer) throw new Error(`unexpected save dialog: ${options.title}`);
    return answer(options);
  }

  async info(message: string, options: vscode.MessageOptions, ...actions: string[]): Promise<string | undefined> {
    return this.record("info", message, options, actions);
  }
  async warning(message: string, options: vscode.MessageOptions, ...actions: string[]): Promise<string | undefined> {
    return this.record("warning", message, options, actions);
  }
  async error(message: string, ...actions: string[]): Promise<string | undefined> {
    return this.record("error", message, {}, actions);
  }

  private record(level: ShownMessage["level"], message: string, options: vscode.MessageOptions, actions: string[]): string | undefined {
    this.shown.push({ level, message, detail: options.detail, modal: options.modal ?? false, actions });
    // Toasts are not questions: they stay unanswered, like a user who does not click them.
    return options.modal ? this.messageAnswers.shift() : undefined;
  }
}

/** Picks the first item whose label or description contains `text`. */
export const pickContaining =
  (text: string): PickAnswer =>
  (items) =>
    items.find((i) => i.label.includes(text) || (i.description ?? "").includes(text));
