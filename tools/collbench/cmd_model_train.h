/* collbench model --train: training step predictions (src/costmodel/model_train.h)
 * for clusters, from training rows and the all-reduce fits. */
#ifndef CMD_MODEL_TRAIN_H
#define CMD_MODEL_TRAIN_H

#include <stddef.h>

#include "costmodel/model_fit.h"
#include "costmodel/model_predict.h"
#include "report/report_data.h"

/* Prints, per (model, backend, batch) of the training rows, the measured step
 * at its largest world beside the model's, then each sync/ddp configuration's
 * predicted step on each cluster. 1 when nothing could be predicted (why on
 * stderr), else 0. */
int cmd_model_train_print(const model_fits *f, const model_cluster *clusters, size_t nclusters,
                          const report_train_row *rows, size_t n);

#endif
