/**
 * The reload step both trees share: ask the studio for the list when the cloud can be reached,
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
