/**
 * Every question and message the commands put to the user goes through this one object. The
 * extension uses VS Code's own dialogs; extension tests replace its members with scripted answers
 * (a test cannot type into a real input box), and read what was shown. Nothing else is stubbed.
 */
import * as vscode from "vscode";

export interface Prompts {
  inputBox(options: vscode.InputBoxOptions): Thenable<string | undefined>;
  quickPick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Thenable<T | undefined>;
  /** A quick pick with checkboxes; undefined when dismissed. */
  quickPickMany<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions): Thenable<T[] | undefined>;
  /** Where to save a file; undefined when dismissed. */
  saveDialog(options: vscode.SaveDialogOptions): Thenable<vscode.Uri | undefined>;
  info(message: string, options: vscode.MessageOptions, ...actions: string[]): Thenable<string | undefined>;
  warning(message: string, options: vscode.MessageOptions, ...actions: string[]): Thenable<string | undefined>;
  error(message: string, ...actions: string[]): Thenable<string | undefined>;
}

export function vscodePrompts(): Prompts {
  return {
    inputBox: (options) => vscode.window.showInputBox(options),
    quickPick: (items, options) => vscode.window.showQuickPick(items, options),
    quickPickMany: (items, options) => vscode.window.showQuickPick(items, { ...options, canPickMany: true }),
    saveDialog: (options) => vscode.window.showSaveDialog(options),
    info: (message, options, ...actions) => vscode.window.showInformationMessage(message, options, ...actions),
    warning: (message, options, ...actions) => vscode.window.showWarningMessage(message, options, ...actions),
    error: (message, ...actions) => vscode.window.showErrorMessage(message, ...actions),
  };
}
