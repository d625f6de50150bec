import * as vscode from "vscode";

/**
 * What both trees share: the reload step: ask the studio for the list when the cloud can be reached,
 * and on failure keep showing the previous rows beside the error (a flaky moment should not
 * empty the tree).
 */
export async function loadList<T>(canReachCloud: boolean, fetchList: () => Promise<T[]>, previous: T[]): Promise<{ items: T[]; problem: string | undefined }> {
  if (!canReachCloud) return { items: [], problem: undefined };
  try {
    return { items: await fetchList(), problem: undefined };
  } catch (error) {
    return { items: previous, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** The row a tree shows in place of its items when loading failed. */
export function problemItem(title: string, message: string): vscode.TreeItem {
  const item = new vscode.TreeItem(title, vscode.TreeItemCollapsibleState.None);
  item.description = message;
  item.tooltip = message;
  item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("problemsWarningIcon.foreground"));
  return item;
}
