import { ValidationError } from "../../errors.js";
import type { EntityModel } from "../../schema/entity-model.js";
import type { RequestContext } from "../core/requests.js";
import { ChangeFeed } from "../feed/change-feed.js";
import type { ContextStack } from "./context-runner.js";

/** `db.changes(Entity)`: the feed of a class declared with `changeFeed`, read through the context's stack. */
export function changeFeedOf<T extends object>(
  model: EntityModel<T>,
  runner: RequestContext,
  stack: ContextStack,
): ChangeFeed<T> {
  if (model.changeFeed === undefined) {
    throw new ValidationError(
      "change-feed",
      `${model.name} has no change feed: declare it with @Entity({ …, changeFeed: true })`,
    );
  }
  return new ChangeFeed(model, {
    runner,
    directory: stack.feedDirectory,
    open: (table, row) => stack.encryption.openCopy(table, row),
    sleep: stack.sleep,
  });
}
