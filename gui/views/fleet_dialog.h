// File → Compare Fleet from Prometheus…: asks for what `lockscope diff
// --prometheus` takes (the server, two selectors or a label, the window, its
// end, how many locks one by one) and checks it as the CLI does before it
// closes, so a bad selector or window is a sentence in the dialog.
#pragma once

#include "fleet/fleet_diff.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QRadioButton;
class QSpinBox;

namespace lockscope::gui {

class FleetDialog : public QDialog {
    Q_OBJECT
public:
    explicit FleetDialog(QWidget* parent = nullptr);

    // Fills the fields (the last request the user made, say).
    void setRequest(const fleet::FleetRequest& request);
    fleet::FleetRequest request() const;

    void accept() override;

private:
    void updateMode();

    QLineEdit* url_;
    QRadioButton* selectors_;
    QRadioButton* by_label_;
    QLineEdit* a_;
    QLineEdit* b_;
    QLineEdit* by_;
    QLineEdit* window_;
    QLineEdit* end_;
    QSpinBox* top_;
    QLabel* error_;
};

}  // namespace lockscope::gui
